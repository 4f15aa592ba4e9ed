import type { Stack } from 'aws-cdk-lib';
import { BedrockModelIdError } from '../errors.js';

/** Geography prefixes of Bedrock cross-region (system-defined) inference profiles. */
const PROFILE_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov|global)\./;
const MODEL_ID = /^[A-Za-z0-9._:-]{1,200}$/;
/** `arn:<partition>:bedrock:<region>:<account?>:<type>/<id>`, the forms Converse accepts as a model id. */
const BEDROCK_ARN =
  /^arn:(aws[a-z-]*):bedrock:([a-z0-9-]+):(\d{12})?:(foundation-model|inference-profile|application-inference-profile|provisioned-model)\/([A-Za-z0-9._:-]{1,200})$/;

export interface BedrockModelGrant {
  /** What bedrock:InvokeModel must name. */
  resources: string[];
  /** cdk-nag IAM5 findings that are expected (the region wildcard of a cross-region profile). */
  acknowledge: string[];
  /**
   * Set when the id names a resource whose foundation models cannot be known offline (an
   * application inference profile, provisioned throughput): those need granting by the app.
   */
  unknownModels?: string;
}

/** A cross-region profile `<geo>.<model>` routes to `<model>` in whichever region it picks. */
function profileModel(profileId: string): string | undefined {
  const match = PROFILE_PREFIX.exec(profileId);
  return match ? profileId.slice(match[0].length) : undefined;
}

/**
 * The ARNs bedrock:InvokeModel must name for a model id (the part after `bedrock:`). A plain model
 * id is one foundation model in this region. A cross-region inference profile id
 * (`us.anthropic...`) is the profile in this account plus the foundation model in whichever region
 * the profile routes to; that region wildcard is the one cdk-nag finding to acknowledge. An ARN is
 * granted as written, plus, for a system-defined profile, its foundation model in any region.
 */
export function bedrockModelArns(stack: Stack, modelId: string): BedrockModelGrant {
  const arn = BEDROCK_ARN.exec(modelId);
  if (arn) {
    const [, partition = 'aws', , , type, id = ''] = arn;
    if (type === 'foundation-model') return { resources: [modelId], acknowledge: [] };
    if (type === 'inference-profile') {
      const model = profileModel(id);
      if (model === undefined) throw new BedrockModelIdError(modelId, `${id} is not a cross-region inference profile id (<geo>.<model>)`);
      const anyRegion = `arn:${partition}:bedrock:*::foundation-model/${model}`;
      return { resources: [modelId, anyRegion], acknowledge: [`Resource::${anyRegion}`] };
    }
    return { resources: [modelId], acknowledge: [], unknownModels: type as string };
  }
  if (!MODEL_ID.test(modelId)) throw new BedrockModelIdError(modelId, 'not a Bedrock model id, inference profile id or ARN');
  const baseModel = profileModel(modelId);
  if (baseModel === undefined) {
    return { resources: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`], acknowledge: [] };
  }
  return {
    resources: [
      `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
      `arn:${stack.partition}:bedrock:*::foundation-model/${baseModel}`,
    ],
    acknowledge: [`Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${baseModel}`],
  };
}
