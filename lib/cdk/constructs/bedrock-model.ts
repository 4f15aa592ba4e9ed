import type { Stack } from 'aws-cdk-lib';

/** Geography prefixes of Bedrock cross-region (system-defined) inference profiles. */
const PROFILE_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov|global)\./;

/**
 * The ARNs bedrock:InvokeModel must name for a model id. A plain model id is one foundation model
 * in this region. A cross-region inference profile id (`us.anthropic...`) is the profile in this
 * account plus the foundation model in whichever region the profile routes to; that region
 * wildcard is the one cdk-nag finding to acknowledge.
 */
export function bedrockModelArns(stack: Stack, modelId: string): { resources: string[]; acknowledge: string[] } {
  if (!/^[A-Za-z0-9._:-]{1,200}$/.test(modelId)) throw new Error(`not a Bedrock model id: ${modelId}`);
  const match = PROFILE_PREFIX.exec(modelId);
  if (match === null) {
    return { resources: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`], acknowledge: [] };
  }
  const baseModel = modelId.slice(match[0].length);
  return {
    resources: [
      `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
      `arn:${stack.partition}:bedrock:*::foundation-model/${baseModel}`,
    ],
    acknowledge: [`Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${baseModel}`],
  };
}
