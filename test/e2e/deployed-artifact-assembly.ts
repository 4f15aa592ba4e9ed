import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUEUES } from '../../lib/adapters/aws/table-definition.js';

/**
 * Reads what `cdk synth` wrote into a cloud assembly (cdk.out), the way a deployment would use
 * it: each function's code is the asset named by its template's Code.S3Key.
 */

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
}
export interface StackTemplate {
  Resources: Record<string, Resource>;
}

export interface DeployedFunction {
  logicalId: string;
  /** POWERTOOLS_SERVICE_NAME: which Logbook handler this is. */
  service: string;
  /** The asset directory (what CDK zips and uploads). */
  dir: string;
  /** The module Lambda loads for Handler `index.handler`. */
  bundle: string;
  timeoutMs: number;
  memoryMb: number;
  /** Environment.Variables as synthesized: literals, and references to the stack's resources. */
  variables: Record<string, unknown>;
}

export function readTemplate(outdir: string, stackName: string): StackTemplate {
  return JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), 'utf8')) as StackTemplate;
}

/** Every Lambda function of the stack, keyed by its service name, with its bundle in cdk.out. */
export function deployedFunctions(outdir: string, stackName: string): Record<string, DeployedFunction> {
  const template = readTemplate(outdir, stackName);
  const assets = JSON.parse(readFileSync(join(outdir, `${stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string; packaging?: string } }>;
  };
  const found: Record<string, DeployedFunction> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const p = resource.Properties as {
      Code: { S3Key: string };
      Handler: string;
      Timeout: number;
      MemorySize: number;
      Environment: { Variables: Record<string, unknown> };
    };
    const hash = p.Code.S3Key.replace(/\.zip$/, '');
    const asset = assets.files[hash];
    if (!asset || asset.source.packaging !== 'zip') throw new Error(`${logicalId}: no zip asset ${hash} in the assets manifest`);
    // Handler `index.handler`: the runtime loads index.mjs (ESM) and calls its `handler` export.
    if (p.Handler !== 'index.handler') throw new Error(`${logicalId}: unexpected Handler ${p.Handler}`);
    const dir = join(outdir, asset.source.path);
    const bundle = join(dir, 'index.mjs');
    if (!existsSync(bundle)) throw new Error(`${logicalId}: ${bundle} missing (was the app synthesized with bundling?)`);
    const service = String(p.Environment.Variables.POWERTOOLS_SERVICE_NAME);
    found[service] = { logicalId, service, dir, bundle, timeoutMs: p.Timeout * 1000, memoryMb: p.MemorySize, variables: p.Environment.Variables };
  }
  return found;
}

/** What the emulators hold in place of the stack's table, bucket and step queue. */
export interface BoundResources {
  tableName: string;
  bucket: string;
  queueUrl: string;
}

/**
 * The function's environment as Lambda would set it, with each reference to a stack resource
 * replaced by its stand-in on the emulators. A reference this does not know fails loudly, so a new
 * binding cannot go untested here.
 */
export function resolveVariables(fn: DeployedFunction, template: StackTemplate, bound: BoundResources): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.variables)) {
    if (typeof value === 'string') {
      env[name] = value;
      continue;
    }
    const ref = (value as { Ref?: string }).Ref;
    const target = ref === undefined ? undefined : template.Resources[ref];
    const unknown = new Error(`${fn.logicalId}: ${name} = ${JSON.stringify(value)} has no stand-in on the emulators`);
    if (!target) throw unknown;
    switch (target.Type) {
      case 'AWS::DynamoDB::Table':
        env[name] = bound.tableName;
        break;
      case 'AWS::S3::Bucket':
        env[name] = bound.bucket;
        break;
      case 'AWS::SQS::Queue':
        if (!String(target.Properties.QueueName).endsWith(`-${QUEUES.steps.name}`)) throw unknown;
        env[name] = bound.queueUrl;
        break;
      case 'AWS::Events::EventBus':
        env[name] = String(target.Properties.Name);
        break;
      default:
        throw unknown;
    }
  }
  return env;
}

/** The files a bundle was built from, as its source map lists them. */
export function bundleSources(fn: DeployedFunction): string[] {
  return (JSON.parse(readFileSync(`${fn.bundle}.map`, 'utf8')) as { sources: string[] }).sources;
}

/** `…/node_modules/@aws-sdk/client-s3/dist-es/…` → `@aws-sdk/client-s3` (the innermost package). */
export function packageOf(source: string): string | undefined {
  const i = source.lastIndexOf('node_modules/');
  if (i < 0) return undefined;
  const parts = source.slice(i + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}
