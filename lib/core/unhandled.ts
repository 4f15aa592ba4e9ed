/**
 * The `default` of a switch over a closed set (a zod enum's members, a union's tags): `value` has
 * type `never` when every member has its case, so a member added to the schema and not handled
 * is a compile error at the switch (`Argument of type '"new"' is not assignable to parameter of
 * type 'never'`). At run time (a value that bypassed its schema) it throws.
 */
export function unhandled(value: never, what: string): never {
  throw new TypeError(`unhandled ${what}: ${JSON.stringify(value)}`);
}
