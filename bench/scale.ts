export async function runScale(_o: { runs: number; workers?: number; dynamo: string }): Promise<void> {}
