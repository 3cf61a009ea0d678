//! The file origin: serves backup files with Range support and the download fault switches.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine;
use bytes::Bytes;
use futures_util::{stream, StreamExt};

use crate::error_body::error;
use crate::payload;
use crate::state::{Shared, Stats};

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/download/{key}", get(download))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such file") })
        .with_state(shared.clone())
        .merge(crate::webhook_site::router())
        .merge(crate::monitor::router(shared))
}

/// A byte range `start..end` (end exclusive) of a file of known size.
#[derive(Debug, PartialEq, Eq)]
struct ByteRange {
    start: u64,
    end: u64,
}

/// Parses a single `bytes=a-b`, `bytes=a-` or `bytes=-n` range. `None` means unsatisfiable or
/// malformed; several ranges are not supported (the whole file is then served).
fn parse_range(value: &str, size: u64) -> Option<Option<ByteRange>> {
    let spec = value.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return Some(None);
    }
    let (a, b) = spec.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    let range = if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        ByteRange {
            start: size.saturating_sub(n),
            end: size,
        }
    } else {
        let start: u64 = a.parse().ok()?;
        let end = if b.is_empty() {
            size
        } else {
            b.parse::<u64>().ok()?.saturating_add(1).min(size)
        };
        ByteRange { start, end }
    };
    (range.start < range.end).then_some(Some(range))
}

async fn download(
    State(shared): State<Arc<Shared>>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> Response {
    Stats::bump(&shared.stats.downloads);
    let downloading = shared.stats.downloading();
    shared.timeline.lock().unwrap().download();
    if headers.contains_key("token") {
        Stats::bump(&shared.stats.token_on_file_origin);
    }
    crate::state::pass(&shared.downloads_held).await;
    // (Looked up once let through, so a link that expired while its request was held is
    // refused, as a file host checks a signed link when it answers.)
    let (size, name) = match shared.files.lock().unwrap().get(&key) {
        Some(file) if file.expired => return error(StatusCode::FORBIDDEN, "link expired"),
        Some(file) => (file.size, file.name.clone()),
        None => return error(StatusCode::NOT_FOUND, "no such file"),
    };
    let faults = shared.faults();
    if let Some(status) = faults.download_status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return error(status, "download failed");
    }
    let etag = format!("\"{key}-{size}\"");
    let wanted = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    let if_range_ok = match headers.get(header::IF_RANGE).and_then(|v| v.to_str().ok()) {
        Some(tag) => faults.ignore_if_range || (!faults.no_etag && tag == etag),
        None => true,
    };
    let range = match wanted {
        Some(value) if if_range_ok => match parse_range(value, size) {
            Some(range) => range,
            None => {
                let mut response =
                    error(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable");
                response.headers_mut().insert(
                    header::CONTENT_RANGE,
                    HeaderValue::from_str(&format!("bytes */{size}")).unwrap(),
                );
                return response;
            }
        },
        _ => None,
    };
    let cut_after = {
        let mut f = shared.faults.lock().unwrap();
        match f.cut_download_after {
            Some(after) if f.cut_download_times > 0 => {
                f.cut_download_times -= 1;
                Some(after)
            }
            _ => None,
        }
    };
    if cut_after.is_some() && faults.expire_link_on_cut {
        if let Some(file) = shared.files.lock().unwrap().get_mut(&key) {
            file.expired = true;
        }
    }

    let (status, start, end) = match &range {
        Some(r) => {
            Stats::bump(&shared.stats.partial_downloads);
            (StatusCode::PARTIAL_CONTENT, r.start, r.end)
        }
        None => (StatusCode::OK, 0, size),
    };
    let body = body_stream(
        start,
        end,
        size,
        cut_after,
        faults.download_rate,
        faults.corrupt_download,
    );
    // Counted as being answered until its last byte is handed over, the body ends or the
    // client goes. (At its last byte: the client, every byte in, may start its next download
    // at once, before hyper has let go of this body — counted until then, the two overlapped.)
    let body = stream::unfold(
        (body.boxed(), Some(downloading), end - start),
        |(mut body, mut downloading, mut left)| async move {
            let chunk = body.next().await?;
            if let Ok(bytes) = &chunk {
                left = left.saturating_sub(bytes.len() as u64);
                if left == 0 {
                    downloading = None;
                }
            }
            Some((chunk, (body, downloading, left)))
        },
    );
    let mut response = (status, Body::from_stream(body)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(end - start));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let etag_left_out = faults.no_etag || (faults.no_etag_on_partial && range.is_some());
    if !etag_left_out {
        h.insert(header::ETAG, HeaderValue::from_str(&etag).unwrap());
    }
    let disposition = faults
        .content_disposition
        .unwrap_or_else(|| format!("attachment; filename=\"{name}\""));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, value);
    }
    if faults.send_digest {
        let digest = base64::engine::general_purpose::STANDARD.encode(payload::sha256(size));
        h.insert(
            "repr-digest",
            HeaderValue::from_str(&format!("sha-256=:{digest}:")).unwrap(),
        );
    }
    if range.is_some() {
        let value = format!("bytes {start}-{}/{size}", end - 1);
        h.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&value).unwrap(),
        );
    }
    response
}

/// The body from `start` to `end`, optionally throttled, cut or corrupted.
fn body_stream(
    start: u64,
    end: u64,
    size: u64,
    cut_after: Option<u64>,
    rate: Option<u64>,
    corrupt: bool,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    let corrupt_at = corrupt.then_some(size / 2);
    stream::unfold((start, 0u64), move |(offset, sent)| async move {
        if offset >= end {
            return None;
        }
        if let Some(cut) = cut_after {
            if sent >= cut {
                let cut = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "simulated cut");
                return Some((Err(cut), (end, sent)));
            }
        }
        let mut len = (end - offset).min(payload::MAX_CHUNK as u64);
        if let Some(cut) = cut_after {
            len = len.min(cut - sent).max(1);
        }
        if let Some(rate) = rate {
            let wait = Duration::from_secs_f64(len as f64 / rate.max(1) as f64);
            tokio::time::sleep(wait).await;
        }
        let mut chunk = payload::file_slice(size, offset, len as usize);
        if let Some(at) = corrupt_at.filter(|at| (offset..offset + len).contains(at)) {
            let mut copy = chunk.to_vec();
            copy[(at - offset) as usize] ^= 0xFF;
            chunk = Bytes::from(copy);
        }
        Some((Ok(chunk), (offset + len, sent + len)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open-ended, closed, suffix, unsatisfiable and malformed ranges.
    #[test]
    fn parses_ranges() {
        assert_eq!(
            parse_range("bytes=10-", 100),
            Some(Some(ByteRange {
                start: 10,
                end: 100
            }))
        );
        assert_eq!(
            parse_range("bytes=10-19", 100),
            Some(Some(ByteRange { start: 10, end: 20 }))
        );
        assert_eq!(
            parse_range("bytes=-5", 100),
            Some(Some(ByteRange {
                start: 95,
                end: 100
            }))
        );
        assert_eq!(
            parse_range("bytes=100-", 100),
            None,
            "starting at the end is unsatisfiable"
        );
        assert_eq!(parse_range("bytes=x-", 100), None);
        assert_eq!(
            parse_range("bytes=0-1,5-6", 100),
            Some(None),
            "multiple ranges: whole file"
        );
    }
}
