"""shop: an eight-service web shop traced with the official OpenTelemetry
SDK and instrumentation libraries, and nothing else."""
