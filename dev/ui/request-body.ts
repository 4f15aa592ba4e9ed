import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { ClientClosedError, RequestTimeoutError } from '../../lib/core/errors.js';

/**
 * Request bodies on the loopback server (serveLoopback), read from the socket by this module
 * rather than by @hono/node-server, for three things a plain Node server gets wrong:
 *
 * - **An early answer reaches the client.** A 413 decided from Content-Length, a 401, 403, 404 or
 *   415 decided from the headers, goes out while the client is still sending its body. Closing the
 *   socket then, with the body's bytes unread in its receive buffer, makes the kernel send a reset:
 *   a client that writes its whole body before it reads (the AWS SDK, a plain socket) gets EPIPE
 *   or ECONNRESET instead of the answer. So the rest of the body is read and discarded, up to
 *   DRAIN_BYTES and DRAIN_MS, and only then is the socket closed; past either bound it is
 *   half-closed (the answer, then FIN) and kept reading for LINGER_MS before it is destroyed.
 * - **A slow body is timed out.** A body not received within BODY_TIMEOUT_MS of the request's
 *   start fails with RequestTimeoutError, which the API answers 408; a client sending one byte
 *   every two seconds no longer holds a connection for minutes.
 * - **An abandoned upload is what it is.** A client closing its connection mid-body fails the
 *   body with ClientClosedError, which the API logs as a client abort, not as a 500.
 */

/** How long a request's body may take to arrive, from the request's start. */
export const BODY_TIMEOUT_MS = 10_000;
/** Most bytes read and discarded after an early answer before the socket is only half-closed. */
export const DRAIN_BYTES = 16 * 1024 * 1024;
/** Longest the rest of a body is drained after an early answer. */
export const DRAIN_MS = 3_000;
/** After a half-close: how long the socket is still read before it is destroyed. */
export const LINGER_MS = 1_000;

export interface BodyTimings {
  bodyTimeoutMs: number;
  drainBytes: number;
  drainMs: number;
  lingerMs: number;
}

export const DEFAULT_BODY_TIMINGS: BodyTimings = { bodyTimeoutMs: BODY_TIMEOUT_MS, drainBytes: DRAIN_BYTES, drainMs: DRAIN_MS, lingerMs: LINGER_MS };

/** Feeding the app's stream; detached from it (read to the end, failed, cancelled); draining after the answer; done. */
type State = 'feeding' | 'detached' | 'draining' | 'drained';

/**
 * The body of one request as a web stream the app reads, with the deadline and the abort above;
 * `settle()` after the answer discards whatever the app left unread.
 */
export class IncomingBody {
  readonly stream: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private state: State = 'feeding';
  private readonly timer: NodeJS.Timeout;
  private discarded = 0;
  private onDrained: ((how: 'ended' | 'bound') => void) | undefined;

  constructor(
    private readonly incoming: IncomingMessage,
    private readonly timings: BodyTimings,
  ) {
    // Paused before the first 'data' listener, so that adding it does not start the flow: the
    // app's reads (pull) do, and a full queue pauses it again (backpressure down to TCP).
    incoming.pause();
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => {
          if (this.state === 'feeding') incoming.resume();
        },
        // The app stopped reading on purpose (a size limit): what follows is dropped.
        cancel: () => this.detach(),
      },
      { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
    );
    incoming.on('data', this.onData);
    incoming.once('end', this.onEnd);
    incoming.once('close', this.onClose);
    incoming.on('error', this.onClose);
    this.timer = setTimeout(
      () => this.fail(new RequestTimeoutError(`the request body did not arrive within ${timings.bodyTimeoutMs} ms`)),
      timings.bodyTimeoutMs,
    );
    this.timer.unref();
  }

  /** Every byte of the body has arrived (read by the app or not). */
  get received(): boolean {
    return this.incoming.complete;
  }

  private readonly onData = (chunk: Buffer) => {
    if (this.state === 'feeding') {
      this.controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if ((this.controller.desiredSize ?? 0) <= 0) this.incoming.pause();
      return;
    }
    this.discarded += chunk.byteLength;
    if (this.state === 'draining' && this.discarded > this.timings.drainBytes) this.finishDrain('bound');
  };

  private readonly onEnd = () => {
    clearTimeout(this.timer);
    if (this.state === 'feeding') {
      this.state = 'detached';
      this.controller.close();
    } else if (this.state === 'draining') this.finishDrain('ended');
  };

  private readonly onClose = () => {
    if (this.incoming.complete) return;
    this.fail(new ClientClosedError('the client closed the connection before it had sent the whole request body'));
    this.finishDrain('bound');
  };

  /** Stop feeding the app: what still arrives is counted and dropped (settle() bounds how long). */
  private detach(error?: Error): void {
    if (this.state !== 'feeding') return;
    this.state = 'detached';
    if (error) this.controller.error(error);
    this.incoming.resume();
  }

  private fail(error: Error): void {
    clearTimeout(this.timer);
    this.detach(error);
  }

  private finishDrain(how: 'ended' | 'bound'): void {
    if (this.state !== 'draining') return;
    this.state = 'drained';
    this.onDrained?.(how);
  }

  /**
   * Discard what the app left of the body: resolves 'ended' once the whole body is in (the
   * connection is as good as one whose body was read), 'bound' when DRAIN_BYTES or DRAIN_MS ran
   * out or the client went away first.
   */
  settle(): Promise<'ended' | 'bound'> {
    clearTimeout(this.timer);
    this.detach(new ClientClosedError('the request was answered before its body was read'));
    if (this.state === 'drained') return Promise.resolve('bound');
    if (this.incoming.complete) {
      this.state = 'drained';
      return Promise.resolve('ended');
    }
    if (this.incoming.destroyed) {
      this.state = 'drained';
      return Promise.resolve('bound');
    }
    this.state = 'draining';
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.finishDrain('bound'), this.timings.drainMs);
      timer.unref();
      this.onDrained = (how) => {
        clearTimeout(timer);
        resolve(how);
      };
    });
  }
}

/**
 * An answer given before the request's body was all in: it says `Connection: close` (a
 * keep-alive client would otherwise send its next request into a socket about to close), and the
 * socket closes only once the body is drained, or after a half-close and a linger past the bounds.
 * Node's server closes a `Connection: close` socket with destroySoon() when the answer is written:
 * that call is held back until the drain is over.
 */
export function closeAfterDrain(body: IncomingBody, socket: Socket, timings: BodyTimings): void {
  const destroySoon = socket.destroySoon.bind(socket);
  let answered = false;
  let drained: 'ended' | 'bound' | undefined;
  const close = () => {
    if (drained === 'ended') return destroySoon();
    // Past the bounds: FIN after the answer, keep reading (and dropping) so that no unread byte
    // turns the close into a reset, and destroy after the linger or when the client closes.
    socket.end();
    const timer = setTimeout(() => socket.destroy(), timings.lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  socket.destroySoon = () => {
    answered = true;
    if (drained !== undefined) close();
  };
  void body.settle().then((how) => {
    drained = how;
    if (answered) close();
  });
}
