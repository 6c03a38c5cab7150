//! Joint choice per batch (TraceWeaver §4.1, step 5): each request's top-K
//! mappings are vertices weighted by their score, with edges between two
//! mappings of one request and between mappings sharing a call; the
//! heaviest independent set is the batch's assignment. Solved exactly by
//! branch and bound (requests in order, bound = weight so far plus each
//! remaining request's best), from a greedy incumbent, within a node budget.

/// Search nodes per batch before the best set found so far is kept.
const BUDGET: usize = 200_000;

/// One vertex: a mapping's weight and the calls it uses (sorted).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub weight: f64,
    pub calls: Vec<usize>,
}

/// For each request, the index of its chosen option or `None`.
pub fn solve(options: &[Vec<Choice>]) -> Vec<Option<usize>> {
    let n = options.len();
    let best: Vec<f64> = options
        .iter()
        .map(|o| o.iter().map(|x| x.weight).fold(0.0, f64::max))
        .collect();
    let mut rest = vec![0.0; n + 1];
    for i in (0..n).rev() {
        rest[i] = rest[i + 1] + best[i];
    }
    let mut s = Search {
        options,
        rest,
        taken: Vec::new(),
        pick: vec![None; n],
        best_pick: vec![None; n],
        best_weight: -1.0,
        nodes: 0,
    };
    s.greedy();
    s.dfs(0, 0.0);
    s.best_pick
}

struct Search<'a> {
    options: &'a [Vec<Choice>],
    rest: Vec<f64>,
    taken: Vec<usize>,
    pick: Vec<Option<usize>>,
    best_pick: Vec<Option<usize>>,
    best_weight: f64,
    nodes: usize,
}

impl Search<'_> {
    fn free(&self, o: &Choice) -> bool {
        o.calls.iter().all(|c| !self.taken.contains(c))
    }

    /// Heaviest options first, each taken if still free.
    fn greedy(&mut self) {
        let mut all: Vec<(f64, usize, usize)> = self
            .options
            .iter()
            .enumerate()
            .flat_map(|(i, os)| os.iter().enumerate().map(move |(k, o)| (o.weight, i, k)))
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut total = 0.0;
        for (w, i, k) in all {
            if self.pick[i].is_none() && self.free(&self.options[i][k]) {
                self.pick[i] = Some(k);
                self.taken.extend(&self.options[i][k].calls);
                total += w;
            }
        }
        self.best_weight = total;
        self.best_pick = std::mem::replace(&mut self.pick, vec![None; self.options.len()]);
        self.taken.clear();
    }

    fn dfs(&mut self, i: usize, weight: f64) {
        self.nodes += 1;
        if weight > self.best_weight {
            self.best_weight = weight;
            self.best_pick = self.pick.clone();
        }
        if i == self.options.len()
            || self.nodes > BUDGET
            || weight + self.rest[i] <= self.best_weight + 1e-9
        {
            return;
        }
        for k in 0..self.options[i].len() {
            let o = &self.options[i][k];
            if !self.free(o) {
                continue;
            }
            let mark = self.taken.len();
            self.taken.extend(&o.calls);
            self.pick[i] = Some(k);
            self.dfs(i + 1, weight + o.weight);
            self.pick[i] = None;
            self.taken.truncate(mark);
        }
        self.dfs(i + 1, weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(weight: f64, calls: &[usize]) -> Choice {
        Choice {
            weight,
            calls: calls.to_vec(),
        }
    }

    #[test]
    fn picks_the_heaviest_consistent_set_not_the_greedy_one() {
        // Greedy takes request 0's 10 (call 1) and then request 1 and 2
        // only have options on call 1: total 10 + 0. The best gives up 2
        // points at request 0 to let both others in: 8 + 6 + 5.
        let options = vec![
            vec![o(10.0, &[1]), o(8.0, &[2])],
            vec![o(6.0, &[1, 3])],
            vec![o(5.0, &[4]), o(4.0, &[1])],
        ];
        assert_eq!(solve(&options), vec![Some(1), Some(0), Some(0)]);
    }

    #[test]
    fn a_request_without_free_options_is_left_out() {
        let options = vec![vec![o(3.0, &[1])], vec![o(2.0, &[1])]];
        assert_eq!(solve(&options), vec![Some(0), None]);
    }
}
