export async function demoCommand(): Promise<number> {
  throw new Error('not yet');
}
