//! The HTTP side of `secperf serve` (axum on tokio): GET only, every path
//! handed to [`super::pages`] on the blocking pool, its page sent as HTML
//! or JSON (the `.json` path, or `Accept: application/json`), a refusal
//! as plain text with its status. Nothing here writes.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::Served;
use super::pages::{self, Body, Form, Refusal};

/// What every request is checked against.
struct App {
    served: Served,
    /// `--token FILE`'s token: every request must carry it.
    token: Option<String>,
}

/// How long a page may take before the client is answered 503.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// The cookie a browser keeps the token in once it opened `?token=`.
const COOKIE: &str = "secperf_token";

/// Serves `served` on `listener` until the process is stopped; with
/// `token`, only to requests that carry it.
pub fn serve(listener: std::net::TcpListener, served: Served, token: Option<String>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(Arc::new(App { served, token }));
        axum::serve(listener, app).await?;
        Ok(())
    })
}

async fn handle(State(app): State<Arc<App>>, req: Request) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "secperf serve only reads: use GET",
        );
    }
    let path = req.uri().path().to_string();
    let mut query: Vec<(String, String)> =
        form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    if let Some(want) = &app.token {
        match authorised(&req, &query, want) {
            Auth::Yes => {}
            Auth::ByQuery => {
                // Kept in a cookie, and the address shown without it.
                query.retain(|(k, _)| k != "token");
                let mut clean = form_urlencoded::Serializer::new(String::new());
                for (k, v) in &query {
                    clean.append_pair(k, v);
                }
                let clean = clean.finish();
                let to = if clean.is_empty() {
                    path.clone()
                } else {
                    format!("{path}?{clean}")
                };
                let mut r = Redirect::to(&to).into_response();
                if let Ok(v) = HeaderValue::from_str(&format!(
                    "{COOKIE}={want}; Path=/; HttpOnly; SameSite=Strict"
                )) {
                    r.headers_mut().insert(header::SET_COOKIE, v);
                }
                return secure(r);
            }
            Auth::No => {
                return plain(
                    StatusCode::UNAUTHORIZED,
                    "this server asks for its token (--token FILE): open any page once with \
                     ?token=TOKEN (a cookie keeps it), or send Authorization: Bearer TOKEN",
                );
            }
        }
    }
    if path == "/" {
        return Redirect::to("/runs").into_response();
    }
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let wants_json = accept.contains("application/json") && !accept.contains("text/html");
    // A browser gets a refusal as a page whose paths are links.
    let browser = accept.contains("text/html");
    let app_for_refusal = app.clone();
    let refused = move |r: Refusal| {
        if browser {
            refused_page(&app_for_refusal.served, r)
        } else {
            refused(r)
        }
    };
    let (page, mut form) = match pages::route(&path, &query) {
        Ok(r) => r,
        Err(refusal) => return refused(refusal),
    };
    if wants_json {
        form = Form::Json;
    }
    // A store that hangs (a shared store's server stopped mid-answer) must
    // not hold the client for ever: it is told to come back.
    let answered = match tokio::time::timeout(
        ANSWER_WITHIN,
        tokio::task::spawn_blocking(move || pages::answer(&app.served, &page, form)),
    )
    .await
    {
        Ok(answered) => answered,
        Err(_) => {
            return refused(Refusal::unavailable(format!(
                "the store did not answer within {} s; try again later",
                ANSWER_WITHIN.as_secs()
            )));
        }
    };
    match answered {
        Ok(Ok(Body::Html(html))) => {
            let mut r = html.into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            secure(r)
        }
        Ok(Ok(Body::Json(v))) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
            let mut r = text.into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            secure(r)
        }
        Ok(Err(refusal)) => refused(refusal),
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the page could not be made: {e}"),
        ),
    }
}

enum Auth {
    Yes,
    /// In the query: set the cookie and send the browser on.
    ByQuery,
    No,
}

/// Whether `req` carries the token: `Authorization: Bearer`, the cookie,
/// or `?token=`.
fn authorised(req: &Request, query: &[(String, String)], want: &str) -> Auth {
    let headers = req.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if bearer.is_some_and(|t| same(t.trim(), want)) {
        return Auth::Yes;
    }
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .any(|t| same(t, want));
    if cookie {
        return Auth::Yes;
    }
    if query.iter().any(|(k, v)| k == "token" && same(v, want)) {
        return Auth::ByQuery;
    }
    Auth::No
}

/// Compares without stopping at the first difference (so the time taken
/// tells nothing of how much of a guess was right).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn refused(r: Refusal) -> Response {
    if r.status >= 500 {
        crate::say!("secperf: serve: {}", r.reason);
    }
    plain(
        StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &r.reason,
    )
}

/// A refusal as a page, for a browser ([`pages::frame::refusal`]).
fn refused_page(served: &super::Served, r: Refusal) -> Response {
    if r.status >= 500 {
        crate::say!("secperf: serve: {}", r.reason);
    }
    let mut resp = (
        StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        pages::frame::refusal(served, r.status, &r.reason),
    )
        .into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(resp)
}

fn plain(status: StatusCode, text: &str) -> Response {
    let mut r = (status, format!("{text}\n")).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(r)
}

/// Headers that keep a page to itself: nothing is loaded from elsewhere
/// (the pages need nothing: inline style and SVG), no script runs, and no
/// other site frames it.
fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; \
             frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}
