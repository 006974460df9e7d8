//! Errors as JSON: the same body `lucy --json` prints on stderr
//! (`{"error", "exit_code", "issues"}`), with an HTTP status.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Error;

/// The body of every error response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What went wrong and what to do, as the CLI says it.
    pub error: String,
    /// The exit code `lucy` would end with (2 bad input, 3 infeasible, 1 other).
    pub exit_code: i32,
    /// For an invalid dbModel: every issue (JSON path, message, hint).
    pub issues: serde_json::Value,
}

/// An error with its HTTP status.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        let exit_code = if status.is_client_error() { 2 } else { 1 };
        ApiError {
            status,
            body: ErrorBody { error: message.into(), exit_code, issues: serde_json::Value::Null },
            retry_after: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 429: every slot for expensive requests is taken.
    pub fn busy(cap: usize) -> Self {
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("the server is already running {cap} ask/view request(s), its --max-concurrent cap; retry later"),
        );
        e.retry_after = Some(1);
        e
    }

    /// 504: the request's time limit passed.
    pub fn timeout(secs: f64) -> Self {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!("the request took longer than the server's --request-timeout of {secs} s"),
        )
    }
}

/// HTTP status for a library error, by the same classes as the exit codes.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Input(_) | Error::Model(_) => StatusCode::BAD_REQUEST,
        Error::Infeasible(_) | Error::Sql(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Llm { .. } => StatusCode::BAD_GATEWAY,
        Error::Io { .. } | Error::Solver(_) | Error::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let issues = match &e {
            Error::Model(v) => serde_json::to_value(v).unwrap_or_default(),
            _ => serde_json::Value::Null,
        };
        ApiError {
            status: status_of(&e),
            body: ErrorBody { error: e.to_string(), exit_code: e.exit_code(), issues },
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}
