/**
 * The tool input schema as sent to a provider: the pinned JSON Schema minus its top-level
 * `$schema` URI, which some OpenAI-compatible servers reject and none needs. Nothing else changes.
 */
export function wireSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
