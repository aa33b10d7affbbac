//! OpenTelemetry export of the [`Instrumentation`](super::Instrumentation) spans (feature
//! `otel`).
//!
//! The capability's spans are plain [`tracing`] spans; this module gives the
//! [`tracing-opentelemetry`](tracing_opentelemetry) layer that turns them (and any other
//! tracing spans) into OpenTelemetry spans, using the special fields the capability sets:
//! `otel.name` (`chat gpt-4o`, `execute_tool get_weather`...), `otel.kind` and
//! `otel.status_code`. Bring your own tracer provider (an OTLP exporter, for example) and add
//! the layer to your subscriber:
//!
//! ```ignore
//! use opentelemetry::trace::TracerProvider as _;
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
//!     .with_batch_exporter(my_otlp_exporter)
//!     .build();
//! let subscriber = tracing_subscriber::registry()
//!     .with(toolsmith::capability::otel::layer(provider.tracer("my-service")));
//! tracing::subscriber::set_global_default(subscriber)?;
//! ```
//!
//! The versions this crate builds against are re-exported as [`opentelemetry`] and
//! [`tracing_opentelemetry`], so a program can name the same ones.

pub use opentelemetry;
pub use tracing_opentelemetry;

use opentelemetry::trace::Tracer;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::registry::LookupSpan;

/// A tracing layer that exports spans through `tracer` (an OpenTelemetry tracer, typically
/// `provider.tracer("service-name")`).
pub fn layer<S, T>(tracer: T) -> OpenTelemetryLayer<S, T>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
    T: Tracer + 'static,
    T::Span: Send + Sync,
{
    tracing_opentelemetry::layer().with_tracer(tracer)
}
