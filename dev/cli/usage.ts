/** Kept apart from the commands so that printing usage loads no emulator code. */
export const DEV_USAGE = `logbook dev --agents FILE [--port N] [--dynamo auto|dynalite|dynamodb-local] [--work-dir DIR] [--workers N] [--otlp URL]
  The local stack on your agents: DynamoDB, S3 and SQS emulators, the HTTP API on 127.0.0.1,
  the worker handler in killable child processes, and the sweeper. Submits no run; Ctrl-C stops.
  --otlp URL sends every step's OpenTelemetry spans to that OTLP/HTTP collector (e.g. http://127.0.0.1:4318),
  shorthand for OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=URL; the standard OTEL_* variables
  alone work too (OTEL_METRICS_EXPORTER=otlp adds the GenAI metrics).`;
