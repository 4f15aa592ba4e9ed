import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { CURRENTLY_RECOMMENDED_FLAGS } from 'aws-cdk-lib/cx-api';
import { Logbook } from 'logbook/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { generatedEntryDir } from '../../lib/cdk/agents-module.js';
import { AgentsModuleInvalidError, AgentsModuleLoadError, BedrockModelIdError, ProjectFileNotFoundError } from '../../lib/cdk/errors.js';
import { TRIAGE_MODEL, WRITER_MODEL } from '../fixtures/apps/bedrock-agents/agents.js';
import { DRAFTS_MODEL, NOTES_MODEL } from '../fixtures/apps/scripted-agents/agents.js';
import { asArray, describeResource } from './synth.js';
import { userApp } from './user-app.js';

// `cdk` runs in the project root, which is where the construct resolves relative paths from.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BEDROCK_AGENTS = 'test/fixtures/apps/bedrock-agents/agents.ts';
const SCRIPTED_AGENTS = 'test/fixtures/apps/scripted-agents/agents.ts';
const KINDS = ['worker', 'api', 'trigger', 'sweeper'] as const;

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

/** Every statement naming a bedrock action, with the logical id of the policy that holds it. */
function bedrockStatements(template: Template): { policy: string; statement: Statement }[] {
  return Object.entries(template.findResources('AWS::IAM::Policy')).flatMap(([policy, p]) =>
    (p.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement.filter((st) =>
      asArray(st.Action).some((a) => a.startsWith('bedrock:')),
    ).map((statement) => ({ policy, statement })),
  );
}

function thrown(build: () => unknown): Error & { code?: string } {
  try {
    build();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the construct to throw');
}

describe('Logbook in a user\'s own stack, no handler files', () => {
  let logbook: Logbook;
  let template: Template;
  let nag: unknown[];
  beforeAll(() => {
    const u = userApp();
    logbook = new Logbook(u.stack, 'Agents', { agents: BEDROCK_AGENTS });
    ({ template, nagViolations: nag } = u.synth());
  });

  it('is cdk-nag clean in a plain App', () => {
    expect(nag).toEqual([]);
  });

  it('is cdk-nag clean in an App with the feature flags `cdk init` writes', () => {
    const u = userApp({ context: { ...CURRENTLY_RECOMMENDED_FLAGS } });
    new Logbook(u.stack, 'Agents', { agents: BEDROCK_AGENTS });
    expect(u.synth().nagViolations).toEqual([]);
  });

  it('reads the models the agents pin from the agents module', () => {
    expect([...logbook.modelIds].sort()).toEqual([TRIAGE_MODEL, WRITER_MODEL].sort());
  });

  it('grants bedrock:InvokeModel to the worker on exactly those two models: the plain id in this region, the profile and its model', () => {
    const found = bedrockStatements(template);
    expect(found).toHaveLength(1);
    expect(found[0]?.policy).toMatch(/^AgentsWorkerRole/);
    expect(found[0]?.statement.Action).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream']);
    expect(asArray(found[0]?.statement.Resource).map(describeResource).sort()).toEqual(
      [
        'arn:Ref:AWS::Partition:bedrock:Ref:AWS::Region::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
        'arn:Ref:AWS::Partition:bedrock:Ref:AWS::Region:Ref:AWS::AccountId:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0',
        // A profile routes to the same model in other regions: the region is the only wildcard.
        'arn:Ref:AWS::Partition:bedrock:*::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0',
      ].sort(),
    );
  });

  it('grants no Bedrock access when the agents pin only scripted and OpenAI models', () => {
    const u = userApp();
    const scripted = new Logbook(u.stack, 'Agents', { agents: SCRIPTED_AGENTS });
    expect([...scripted.modelIds].sort()).toEqual([DRAFTS_MODEL, NOTES_MODEL].sort());
    const synthesized = u.synth();
    expect(synthesized.nagViolations).toEqual([]);
    expect(bedrockStatements(synthesized.template)).toEqual([]);
  });

  it('writes one-line handler entries over the agents module, one directory per agents module', () => {
    const agentsModule = resolve(ROOT, BEDROCK_AGENTS);
    const dir = generatedEntryDir(ROOT, agentsModule);
    expect(dir.startsWith(resolve(ROOT, 'node_modules/.cache/logbook/handlers'))).toBe(true);
    expect(dir).not.toBe(generatedEntryDir(ROOT, resolve(ROOT, SCRIPTED_AGENTS)));
    const factories = { worker: 'createWorkerHandler', api: 'createApiHandler', trigger: 'createTriggerHandler', sweeper: 'createSweeperHandler' };
    for (const kind of KINDS) {
      const file = resolve(dir, `${kind}.ts`);
      expect(existsSync(file), file).toBe(true);
      const code = readFileSync(file, 'utf8');
      expect(code).toContain(`import { ${factories[kind]} } from 'logbook/lambda';`);
      const imported = /import agents from '([^']+)';/.exec(code)?.[1];
      if (kind === 'sweeper') {
        // The sweeper runs no agent code, so its bundle carries none.
        expect(imported).toBeUndefined();
        expect(code).toContain(`export const handler = ${factories[kind]}();`);
      } else {
        expect(imported && resolve(dirname(file), imported)).toBe(agentsModule);
        expect(code).toContain(`export const handler = ${factories[kind]}({ agents });`);
      }
    }
  });

  it('binds the runtime environment of every function', () => {
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      const vars = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
      for (const name of ['LOGBOOK_TABLE', 'LOGBOOK_BUCKET', 'LOGBOOK_QUEUE_URL']) expect(vars[name], name).toBeDefined();
    }
  });
});

describe('Bedrock model ARNs', () => {
  it('grants an ARN as written, a system profile ARN with its model in any region, and warns about what an application profile routes to', () => {
    const u = userApp();
    const profile = 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-3-7-sonnet-20250219-v1:0';
    const appProfile = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3d4e5f6';
    const model = 'arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-pro-v1:0';
    const logbook = new Logbook(u.stack, 'Agents', { agents: SCRIPTED_AGENTS, models: [`bedrock:${model}`, `bedrock:${profile}`, `bedrock:${appProfile}`] });
    // What the application profile routes to, granted by the app as the warning says.
    logbook.functions.worker.bindModels([TRIAGE_MODEL]);
    const { template, nagViolations } = u.synth();
    expect(nagViolations).toEqual([]);
    const resources = bedrockStatements(template).flatMap(({ policy, statement }) => {
      expect(policy).toMatch(/^AgentsWorkerRole/);
      return asArray(statement.Resource).map(describeResource);
    });
    expect(resources.sort()).toEqual(
      [
        model,
        profile,
        'arn:aws:bedrock:*::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0',
        appProfile,
        'arn:Ref:AWS::Partition:bedrock:Ref:AWS::Region::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
      ].sort(),
    );
    const warnings = Annotations.fromStack(u.stack).findWarning('*', Match.stringLikeRegexp('application-inference-profile'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.entry.data)).toContain("logbook.functions.worker.bindModels(['bedrock:<foundation model id>'])");
  });

  it('refuses what is neither a model id nor a Bedrock ARN', () => {
    const error = thrown(() => new Logbook(userApp().stack, 'Agents', { agents: SCRIPTED_AGENTS, models: ['bedrock:arn:aws:s3:::my-bucket/x'] }));
    expect(error).toBeInstanceOf(BedrockModelIdError);
    expect(error.code).toBe('bedrock_model_id_invalid');
    expect(error.message).toBe('Logbook: cannot grant bedrock:InvokeModel for bedrock:arn:aws:s3:::my-bucket/x: not a Bedrock model id, inference profile id or ARN');
  });
});

describe('outputs and names', () => {
  it('prefixes output ids with the construct id unless it is `Logbook`, and keeps two deployments in one stack apart', () => {
    const u = userApp();
    new Logbook(u.stack, 'Logbook', { agents: SCRIPTED_AGENTS, models: [NOTES_MODEL] });
    new Logbook(u.stack, 'Agents', { agents: BEDROCK_AGENTS, models: [TRIAGE_MODEL] });
    const { template, nagViolations } = u.synth();
    expect(nagViolations).toEqual([]);
    const names = ['ApiUrl', 'TableName', 'BucketName', 'QueueUrl', 'EventBusName', 'AlarmTopicArn'];
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual([...names, ...names.map((n) => `Agents${n}`)].sort());
    const queues = Object.values(template.findResources('AWS::SQS::Queue'))
      .map((q) => (q.Properties as { QueueName?: string }).QueueName)
      .filter(Boolean)
      .sort();
    expect(queues).toEqual([
      'UserStack-Agents-logbook-steps-dlq.fifo',
      'UserStack-Agents-logbook-steps.fifo',
      'UserStack-logbook-steps-dlq.fifo',
      'UserStack-logbook-steps.fifo',
    ]);
    const buses = Object.values(template.findResources('AWS::Events::EventBus')).map((b) => (b.Properties as { Name: string }).Name);
    expect(buses.sort()).toEqual(['UserStack', 'UserStack-Agents']);
  });
});

describe('clear errors at synth time', () => {
  it('names the agents prop and the path it looked at when the agents module is missing', () => {
    const error = thrown(() => new Logbook(userApp().stack, 'Agents', { agents: 'src/agents.ts' }));
    expect(error).toBeInstanceOf(ProjectFileNotFoundError);
    expect(error.code).toBe('project_file_not_found');
    expect(error.message).toBe(`Logbook: agents src/agents.ts not found (looked at ${resolve(ROOT, 'src/agents.ts')}; relative paths are from projectRoot)`);
  });

  it('names the handler when a handler file is missing', () => {
    const error = thrown(() => new Logbook(userApp().stack, 'Agents', { agents: SCRIPTED_AGENTS, handlers: { worker: 'src/worker.ts' } }));
    expect(error).toBeInstanceOf(ProjectFileNotFoundError);
    expect(error.message).toContain('handlers.worker src/worker.ts not found');
  });

  it('says what the default export is when it is not defineAgents(...)', () => {
    const error = thrown(() => new Logbook(userApp().stack, 'Agents', { agents: 'test/fixtures/apps/not-agents/agents.ts' }));
    expect(error).toBeInstanceOf(AgentsModuleInvalidError);
    expect(error.code).toBe('agents_module_invalid');
    expect(error.message).toContain('not-agents/agents.ts is an object with keys agents, not defineAgents(...)');
  });

  it('passes on why the module failed to load, and loads it with the functions\' environment', () => {
    const agents = 'test/fixtures/apps/throws-on-load/agents.ts';
    const error = thrown(() => new Logbook(userApp().stack, 'Agents', { agents }));
    expect(error).toBeInstanceOf(AgentsModuleLoadError);
    expect(error.code).toBe('agents_module_load_failed');
    expect(error.message).toContain(': FIXTURE_CRM_URL is not set (pass `models: [...]`');
    const loaded = new Logbook(userApp().stack, 'Agents', { agents, environment: { FIXTURE_CRM_URL: 'https://crm.example.com' } });
    expect(loaded.modelIds).toEqual(['bedrock:amazon.nova-lite-v1:0']);
  });
});
