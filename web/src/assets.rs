//! The page, compiled in: no file to find at run time, nothing fetched from
//! elsewhere (no CDN, no web font), so it loads on a machine without a
//! network.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/style.css");

pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let file = |body: &'static str, kind: &'static str| {
        get(move || async move { ([(header::CONTENT_TYPE, kind)], body).into_response() })
    };
    Router::new()
        .route("/", file(INDEX, "text/html; charset=utf-8"))
        .route("/app.js", file(SCRIPT, "text/javascript; charset=utf-8"))
        .route("/style.css", file(STYLE, "text/css; charset=utf-8"))
}
