// Placeholder entry so the CDK stack can bundle it; the runtime issue replaces it with the handler.
export const handler = async (): Promise<void> => {
  throw new Error('functions/trigger.ts is not implemented yet');
};
