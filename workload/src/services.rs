//! The six HotelReservation services' routes. Each does a little real work
//! on a small generated hotel set (nearest hotels, prices, profiles,
//! bookings) so that a request costs what a tiny service costs, not zero.

use crate::client::{CallError, PeerClient};
use crate::config::Service;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Hotels in the generated set.
pub const HOTELS: u32 = 80;
/// How many hotels a search returns.
const NEAREST: usize = 5;

/// What every route needs: its callees and the booking counter.
#[derive(Debug, Clone)]
pub struct AppState {
    pub peers: PeerClient,
    bookings: Arc<AtomicU64>,
}

impl AppState {
    pub fn new(peers: PeerClient) -> Self {
        AppState {
            peers,
            bookings: Arc::default(),
        }
    }
}

/// The routes `service` serves.
pub fn router(service: Service) -> Router<AppState> {
    let r = Router::new();
    match service {
        Service::Frontend => r
            .route("/hotels", get(frontend_hotels))
            .route("/profile", get(frontend_profile))
            .route("/reserve", get(frontend_reserve)),
        Service::Search => r.route("/nearby", get(search_nearby)),
        Service::Geo => r.route("/nearby", get(geo_nearby)),
        Service::Rate => r.route("/rates", get(rate_rates)),
        Service::Profile => r.route("/profiles", get(profile_profiles)),
        Service::Reservation => r.route("/reserve", get(reservation_reserve)),
    }
}

/// A failed callee is the caller's 502, with the one-line reason.
struct Upstream(CallError);

impl IntoResponse for Upstream {
    fn into_response(self) -> Response {
        (StatusCode::BAD_GATEWAY, self.0.to_string()).into_response()
    }
}

impl From<CallError> for Upstream {
    fn from(e: CallError) -> Self {
        Upstream(e)
    }
}

#[derive(Debug, Deserialize)]
pub struct Point {
    lat: f64,
    lon: f64,
}

impl Point {
    /// The query string that passes this point on.
    fn query(&self) -> String {
        format!("lat={}&lon={}", self.lat, self.lon)
    }
}

#[derive(Debug, Deserialize)]
pub struct HotelIds {
    hotels: String,
}

#[derive(Debug, Deserialize)]
pub struct Booking {
    hotel: u32,
    nights: u32,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Ids {
    hotels: Vec<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Rate {
    hotel: u32,
    price: f64,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Profile {
    hotel: u32,
    name: String,
    address: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Confirmation {
    booking: u64,
    hotel: u32,
    nights: u32,
}

/// Hotel `id`'s position: spread over a 0.2° square like a city.
fn position(id: u32) -> (f64, f64) {
    let h = id.wrapping_mul(2_654_435_761);
    let lat = 37.7 + f64::from(h % 1000) / 5000.0;
    let lon = -122.5 + f64::from((h / 1000) % 1000) / 5000.0;
    (lat, lon)
}

fn ids_query(ids: &[u32]) -> String {
    let list: Vec<String> = ids.iter().map(u32::to_string).collect();
    list.join(",")
}

fn parse_ids(s: &str) -> Result<Vec<u32>, (StatusCode, String)> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().ok().filter(|id| *id < HOTELS))
        .collect::<Option<_>>()
        .ok_or_else(|| (StatusCode::BAD_REQUEST, format!("bad hotel list {s:?}")))
}

async fn frontend_hotels(
    State(st): State<AppState>,
    Query(p): Query<Point>,
) -> Result<Json<Vec<Profile>>, Upstream> {
    let found: Ids = st
        .peers
        .call(Service::Search, &format!("/nearby?{}", p.query()))
        .await?;
    let path = format!("/profiles?hotels={}", ids_query(&found.hotels));
    Ok(Json(st.peers.call(Service::Profile, &path).await?))
}

async fn frontend_profile(
    State(st): State<AppState>,
    Query(q): Query<HotelIds>,
) -> Result<Json<Vec<Profile>>, Upstream> {
    let path = format!("/profiles?hotels={}", q.hotels);
    Ok(Json(st.peers.call(Service::Profile, &path).await?))
}

async fn frontend_reserve(
    State(st): State<AppState>,
    Query(b): Query<Booking>,
) -> Result<Json<Confirmation>, Upstream> {
    let path = format!("/reserve?hotel={}&nights={}", b.hotel, b.nights);
    Ok(Json(st.peers.call(Service::Reservation, &path).await?))
}

/// Nearest hotels from geo, cheapest first by rate.
async fn search_nearby(
    State(st): State<AppState>,
    Query(p): Query<Point>,
) -> Result<Json<Ids>, Upstream> {
    let near: Ids = st
        .peers
        .call(Service::Geo, &format!("/nearby?{}", p.query()))
        .await?;
    let path = format!("/rates?hotels={}", ids_query(&near.hotels));
    let mut rates: Vec<Rate> = st.peers.call(Service::Rate, &path).await?;
    rates.sort_by(|a, b| a.price.total_cmp(&b.price));
    Ok(Json(Ids {
        hotels: rates.into_iter().map(|r| r.hotel).collect(),
    }))
}

async fn geo_nearby(Query(p): Query<Point>) -> Json<Ids> {
    let mut all: Vec<(f64, u32)> = (0..HOTELS)
        .map(|id| {
            let (lat, lon) = position(id);
            ((lat - p.lat).powi(2) + (lon - p.lon).powi(2), id)
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    Json(Ids {
        hotels: all.into_iter().take(NEAREST).map(|(_, id)| id).collect(),
    })
}

async fn rate_rates(Query(q): Query<HotelIds>) -> Result<Json<Vec<Rate>>, (StatusCode, String)> {
    let rates = parse_ids(&q.hotels)?
        .into_iter()
        .map(|hotel| Rate {
            hotel,
            price: 80.0 + f64::from(hotel.wrapping_mul(7919) % 220),
        })
        .collect();
    Ok(Json(rates))
}

async fn profile_profiles(
    Query(q): Query<HotelIds>,
) -> Result<Json<Vec<Profile>>, (StatusCode, String)> {
    let profiles = parse_ids(&q.hotels)?
        .into_iter()
        .map(|hotel| {
            let (lat, lon) = position(hotel);
            Profile {
                hotel,
                name: format!("Hotel {hotel}"),
                address: format!("{lat:.4},{lon:.4}"),
            }
        })
        .collect();
    Ok(Json(profiles))
}

async fn reservation_reserve(
    State(st): State<AppState>,
    Query(b): Query<Booking>,
) -> Result<Json<Confirmation>, (StatusCode, String)> {
    if b.hotel >= HOTELS || !(1..=30).contains(&b.nights) {
        return Err((StatusCode::BAD_REQUEST, "no such hotel or stay".into()));
    }
    let booking = st.bookings.fetch_add(1, Ordering::Relaxed) + 1;
    Ok(Json(Confirmation {
        booking,
        hotel: b.hotel,
        nights: b.nights,
    }))
}
