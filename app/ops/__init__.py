"""Operations: health and readiness checks, Prometheus metrics, the small HTTP listener the
controller and workers serve them on, and what ``sbc status`` shows (docs/operations.md)."""
