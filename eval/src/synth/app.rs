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
}

impl std::str::FromStr for App {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hotel" => Ok(App::Hotel),
            "social" => Ok(App::Social),
            _ => Err(format!("unknown app {s:?} (hotel, social)")),
        }
    }
}

/// One call: the service called and the stages of calls it makes; the
/// calls of one stage run in parallel, stages one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub service: &'static str,
    pub stages: Vec<Vec<Call>>,
}

fn leaf(service: &'static str) -> Call {
    Call {
        service,
        stages: Vec::new(),
    }
}

fn call(service: &'static str, stages: Vec<Vec<Call>>) -> Call {
    Call { service, stages }
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
        }
    }

    pub fn work(self, service: &str) -> Work {
        let cached = [
            "rate",
            "profile",
            "reservation",
            "post-storage",
            "user-timeline",
        ]
        .contains(&service);
        Work {
            median_ms: match service {
                "frontend" | "nginx" | "user" | "unique-id" => 0.3,
                "reservation" | "compose-post" => 0.8,
                _ => 0.5,
            },
            sigma: 0.25,
            miss_rate: if cached { 0.1 } else { 0.0 },
            miss_factor: 2.2,
        }
    }

    /// The call tree of one request, by the app's request mix.
    pub fn request(self, rng: &mut impl Rng) -> Call {
        let r: f64 = rng.gen();
        match self {
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
        }
    }
}
