//! A request body that goes out no faster than the bandwidth limit allows: 64 KiB frames,
//! each sent once the budget (the download limit's rate, a budget shared by every upload of
//! the process) has paid for it. While a frame waits, the HTTP client has nothing to write, so the
//! limit holds on the wire, not only on the disk. The body can be made again from its bytes,
//! so the SDK may still retry a request that failed on the way.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use aws_sdk_s3::primitives::{ByteStream, SdkBody};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use kluis_core::download::bandwidth::Bandwidth;

/// Bytes in a frame: small enough that the pace is even, large enough to cost nothing.
const FRAME: usize = 64 * 1024;

/// `bytes` as a body paced by `budget`.
pub fn body(bytes: Bytes, budget: Arc<Bandwidth>) -> ByteStream {
    ByteStream::new(SdkBody::retryable(move || {
        SdkBody::from_body_1_x(Paced {
            rest: bytes.clone(),
            budget: budget.clone(),
            wait: None,
        })
    }))
}

struct Paced {
    rest: Bytes,
    budget: Arc<Bandwidth>,
    /// The budget paying for the next frame.
    wait: Option<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>,
}

impl Body for Paced {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.rest.is_empty() {
            return Poll::Ready(None);
        }
        let n = self.rest.len().min(FRAME);
        if self.wait.is_none() {
            let budget = self.budget.clone();
            self.wait = Some(Box::pin(async move { budget.admit(n).await }));
        }
        let waited = self.wait.as_mut().expect("set above").as_mut().poll(cx);
        if waited.is_pending() {
            return Poll::Pending;
        }
        self.wait = None;
        let frame = self.rest.split_to(n);
        Poll::Ready(Some(Ok(Frame::data(frame))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_core::download::bandwidth::BandwidthLimit;

    /// A 1 MB body under a 0.5 MB/s limit takes about two seconds of the (paused) clock —
    /// less the budget's first burst — and comes out whole, in order.
    #[tokio::test(start_paused = true)]
    async fn a_body_goes_at_the_limit() {
        let limit = BandwidthLimit {
            mb_per_sec: 0.5,
            office_hours: None,
        };
        let budget = Arc::new(Bandwidth::new(Some(limit)).unwrap());
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let started = tokio::time::Instant::now();
        let sent = body(Bytes::from(data.clone()), budget)
            .collect()
            .await
            .unwrap();
        let took = started.elapsed().as_secs_f64();
        assert!(sent.into_bytes() == data, "whole and in order");
        assert!((1.0..=2.1).contains(&took), "paced: took {took} s");
    }
}
