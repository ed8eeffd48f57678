"""What sentry_sdk sends for an exception, caught in memory (never the network), with each
frame's variables and source lines: the options a user sets for those are keywords in
sentry_sdk 2.x and its ``data_collection`` in 3.x."""
from __future__ import annotations


def sentry_event(sentry_sdk, exc: BaseException) -> dict:
    """The event ``sentry_sdk.capture_exception(exc)`` sends, from a client of its own."""
    from sentry_sdk.transport import Transport

    events = []

    class InMemory(Transport):
        def capture_envelope(self, envelope):
            events.extend(item.payload.json for item in envelope.items if item.type == "event")

    if int(sentry_sdk.VERSION.split(".")[0]) >= 3:
        sends = {"data_collection": {"stack_frame_variables": True, "frame_context_lines": 5}}
    else:
        sends = {"include_local_variables": True, "include_source_context": True}
    sentry_sdk.init(dsn="https://key@sentry.invalid/1", transport=InMemory(),
                    max_value_length=1024, default_integrations=False,
                    auto_enabling_integrations=False, **sends)
    try:
        sentry_sdk.capture_exception(exc)
        sentry_sdk.flush()
    finally:
        sentry_sdk.get_client().close()
    assert len(events) == 1, f"sentry_sdk sent {len(events)} events for one exception"
    return events[0]
