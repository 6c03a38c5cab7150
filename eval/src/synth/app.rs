//! DeathStarBench-like applications: which services a request visits, in
//! which order and with what fan-out, and how long each service works.

use rand::Rng;

/// The application a synthetic workload runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum App {
    /// HotelReservation: frontend → search → {geo, rate}, profile, …
    Hotel,
    /// SocialNetwork: compose-post with a parallel fan-out, timelines.
    Social,
    /// MediaMicroservices' compose-review: five services upload to
    /// `compose-review`, whose storage calls vary per request.
    Media,
}

impl std::str::FromStr for App {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [App::Hotel, App::Social, App::Media]
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown app {s:?} (hotel, social, media)"))
    }
}

/// One call: the service called and the stages of calls it makes; the
/// calls of one stage run in parallel, stages one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub service: &'static str,
    pub stages: Vec<Vec<Call>>,
    /// One of the parts its request gathers at `service`: the part that
    /// arrives last makes the request's [`Request::gathered`] calls.
    pub part: bool,
}

impl Call {
    /// Every call below this one, depth first, with the service making it.
    pub fn calls(&self) -> Vec<(&'static str, &Call)> {
        fn walk<'a>(c: &'a Call, out: &mut Vec<(&'static str, &'a Call)>) {
            for k in c.stages.iter().flatten() {
                out.push((c.service, k));
                walk(k, out);
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// The parts below this one (see [`Call::part`]).
    pub fn parts(&self) -> usize {
        self.calls().iter().filter(|(_, k)| k.part).count()
    }
}

/// One request: its call tree, and the calls made once its parts have all
/// arrived, by the part that arrived last. DeathStarBench's compose-review
/// counts a review's five uploads in memcached, and the upload that brings
/// the count to five stores the review; which upload that is depends on
/// how each of the five fared on its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub root: Call,
    pub gathered: Vec<Vec<Call>>,
}

impl Request {
    /// Every call of the request with the service making it, the gathered
    /// ones once, by the service that gathers them.
    pub fn calls(&self) -> Vec<(&'static str, &Call)> {
        let mut out = self.root.calls();
        let Some(at) = out.iter().find(|(_, k)| k.part).map(|(_, k)| k.service) else {
            return out;
        };
        for k in self.gathered.iter().flatten() {
            out.push((at, k));
            out.extend(k.calls());
        }
        out
    }
}

impl From<Call> for Request {
    fn from(root: Call) -> Self {
        Request {
            root,
            gathered: Vec::new(),
        }
    }
}

fn leaf(service: &'static str) -> Call {
    call(service, Vec::new())
}

fn call(service: &'static str, stages: Vec<Vec<Call>>) -> Call {
    Call {
        service,
        stages,
        part: false,
    }
}

/// A call that is one of its request's parts gathered at `service`.
fn part(service: &'static str) -> Call {
    Call {
        part: true,
        ..leaf(service)
    }
}

/// How long one service works on a request: lognormal around `median_ms`,
/// times `miss_factor` on a cache miss.
#[derive(Debug, Clone, Copy)]
pub struct Work {
    pub median_ms: f64,
    pub sigma: f64,
    pub miss_rate: f64,
    pub miss_factor: f64,
}

impl App {
    /// The name `--app` takes.
    pub fn name(self) -> &'static str {
        match self {
            App::Hotel => "hotel",
            App::Social => "social",
            App::Media => "media",
        }
    }

    /// Every service, the root first.
    pub fn services(self) -> &'static [&'static str] {
        match self {
            App::Hotel => &[
                "frontend",
                "search",
                "geo",
                "rate",
                "profile",
                "recommendation",
                "user",
                "reservation",
            ],
            App::Social => &[
                "nginx",
                "compose-post",
                "text",
                "url-shorten",
                "user-mention",
                "media",
                "user",
                "unique-id",
                "post-storage",
                "user-timeline",
                "home-timeline",
                "social-graph",
            ],
            App::Media => &[
                "compose",
                "text",
                "user",
                "unique-id",
                "movie-id",
                "rating",
                "compose-review",
                "review-storage",
                "user-review",
                "movie-review",
            ],
        }
    }

    pub fn work(self, service: &str) -> Work {
        let cached = [
            "rate",
            "profile",
            "reservation",
            "post-storage",
            "user-timeline",
            "review-storage",
        ]
        .contains(&service);
        Work {
            median_ms: match service {
                "frontend" | "nginx" | "user" | "unique-id" | "compose" => 0.3,
                "reservation" | "compose-post" => 0.8,
                "compose-review" => 0.25,
                _ => 0.5,
            },
            sigma: 0.25,
            miss_rate: if cached { 0.1 } else { 0.0 },
            miss_factor: 2.2,
        }
    }

    /// The calls of one request, by the app's request mix.
    pub fn request(self, rng: &mut impl Rng) -> Request {
        let r: f64 = rng.gen();
        let root = match self {
            App::Hotel if r < 0.6 => call(
                "frontend",
                vec![
                    vec![call("search", vec![vec![leaf("geo"), leaf("rate")]])],
                    vec![leaf("profile")],
                ],
            ),
            App::Hotel if r < 0.8 => call(
                "frontend",
                vec![vec![leaf("recommendation")], vec![leaf("profile")]],
            ),
            App::Hotel if r < 0.9 => call("frontend", vec![vec![leaf("user")]]),
            App::Hotel => call(
                "frontend",
                vec![vec![leaf("user")], vec![leaf("reservation")]],
            ),
            App::Social if r < 0.4 => call(
                "nginx",
                vec![vec![call(
                    "compose-post",
                    vec![
                        vec![
                            call(
                                "text",
                                vec![vec![leaf("url-shorten"), leaf("user-mention")]],
                            ),
                            leaf("media"),
                            leaf("user"),
                            leaf("unique-id"),
                        ],
                        vec![
                            leaf("post-storage"),
                            leaf("user-timeline"),
                            call("home-timeline", vec![vec![leaf("social-graph")]]),
                        ],
                    ],
                )]],
            ),
            App::Social => call(
                "nginx",
                vec![vec![call(
                    "home-timeline",
                    vec![vec![leaf("post-storage")]],
                )]],
            ),
            App::Media => return media(r, rng),
        };
        root.into()
    }
}

/// One compose-review request: `compose` hands the parts to `text`,
/// `user`, `unique-id` and `movie-id` at once (`movie-id` also asks
/// `rating`), and each of the five uploads its part to `compose-review`.
/// The upload that arrives last stores the review (`review-storage`,
/// `user-review`, and `movie-review` unless the movie's review list was
/// cached, 25 %): most often `rating`'s, the end of the longest chain,
/// but any of the five where its way was the slowest. `rating`'s upload
/// fails and is retried on 5 % of requests; the failed one counts for
/// nothing.
fn media(r: f64, rng: &mut impl Rng) -> Request {
    let mut store = vec![leaf("review-storage"), leaf("user-review")];
    if r >= 0.25 {
        store.push(leaf("movie-review"));
    }
    let upload = || vec![vec![part("compose-review")]];
    let mut rating = upload();
    if rng.gen_bool(0.05) {
        rating.insert(0, vec![leaf("compose-review")]);
    }
    Request {
        root: call(
            "compose",
            vec![vec![
                call("text", upload()),
                call("user", upload()),
                call("unique-id", upload()),
                call(
                    "movie-id",
                    vec![vec![part("compose-review"), call("rating", rating)]],
                ),
            ]],
        ),
        gathered: vec![store],
    }
}

impl App {
    /// Requests per second the app carries before its busiest service's
    /// workers are always busy: for each service, `workers` over its visits
    /// per request times its mean work (lognormal of spread `sigma`, cache
    /// misses included), the smallest of them. Visits are counted over a
    /// fixed sample of requests.
    pub fn capacity(self, workers: u32, sigma: f64) -> f64 {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        let mut visits: std::collections::HashMap<&str, f64> = Default::default();
        const SAMPLE: usize = 2000;
        for _ in 0..SAMPLE {
            let r = self.request(&mut rng);
            for s in std::iter::once(r.root.service).chain(r.calls().iter().map(|(_, k)| k.service))
            {
                *visits.entry(s).or_default() += 1.0;
            }
        }
        visits
            .iter()
            .map(|(s, v)| {
                let w = self.work(s);
                let mean_ms = w.median_ms
                    * (sigma * sigma / 2.0).exp()
                    * (1.0 + w.miss_rate * (w.miss_factor - 1.0));
                f64::from(workers) * 1000.0 / (mean_ms * v / SAMPLE as f64)
            })
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_review_has_five_callers_and_a_varying_fan_out() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut callers = std::collections::BTreeSet::new();
        let mut fan_outs = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let r = App::Media.request(&mut rng);
            for (caller, k) in r.calls() {
                if k.service == "compose-review" {
                    callers.insert(caller);
                    assert!(k.stages.is_empty(), "an upload makes no calls of its own");
                }
            }
            // Five uploads count; a failed one (rating's, retried) does not.
            assert_eq!(r.root.parts(), 5);
            // The last of them stores the review: two calls (the movie's
            // review list cached) or three.
            fan_outs.insert(r.gathered.iter().flatten().count());
        }
        assert_eq!(
            callers.into_iter().collect::<Vec<_>>(),
            ["movie-id", "rating", "text", "unique-id", "user"]
        );
        assert_eq!(fan_outs.into_iter().collect::<Vec<_>>(), [2, 3]);
        // compose-review works on five uploads per request (and the
        // occasional retry): its four workers are the bottleneck.
        let cap = App::Media.capacity(4, 0.6);
        let one = App::Media.capacity(1, 0.6);
        assert!((cap / one - 4.0).abs() < 1e-9);
        let busy = 5.05 * 0.25 * (0.18f64).exp();
        assert!((cap - 4000.0 / busy).abs() / cap < 0.02, "{cap}");
    }
}
