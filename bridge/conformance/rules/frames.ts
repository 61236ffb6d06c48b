/**
 * Frame rules ("Frames", "Frame size limits", "Close codes"): a request padded to just under
 * SERVER_MIN_FRAME_BYTES is answered and the session stays up; a text frame that is not JSON, a binary frame, and a
 * request without a numeric id each close the connection with 1007.
 */
import { CLOSE_CODES, SERVER_MIN_FRAME_BYTES } from '../../../shared/protocol.js';
import { show } from '../connection.js';
import { failed, passed, type Rule, type SuiteContext } from '../context.js';

/** Room left under the bound for the frame's own members. */
const MARGIN = 1024;

async function closesWith1007(ctx: SuiteContext, data: string | Buffer, binary: boolean, what: string) {
  const { connection } = await ctx.openLoggedIn(false);
  // The binary frame carries a Ping with id 77: a server that answers it instead of closing is not sending a stray.
  connection.sendRaw(data, binary, binary ? { id: 77, cmd: 'Ping' } : undefined);
  const code = await connection.waitForClose(ctx.timeouts.answerMs).catch(() => undefined);
  if (code === undefined) {
    const answered = connection.frames.length > 1 ? `; it sent ${show(connection.frames.at(-1)?.text, 80)}` : '';
    return failed(
      `${what}: expected a close with ${CLOSE_CODES.badFrame}, the connection stayed open ${ctx.timeouts.answerMs} ms${answered}`,
    );
  }
  return code === CLOSE_CODES.badFrame
    ? passed(`closed with ${code}`)
    : failed(`${what}: expected a close with ${CLOSE_CODES.badFrame}, got ${code}`);
}

export const frameRules: Rule[] = [
  {
    id: 'frames.near-limit',
    name: `a request padded to just under SERVER_MIN_FRAME_BYTES (${SERVER_MIN_FRAME_BYTES} bytes) is answered`,
    timeoutMs: (t) => 5 * t.answerMs,
    async run(ctx) {
      const { connection } = await ctx.openLoggedIn(false);
      const id = 424242;
      const head = `{"id":${id},"cmd":"Ping","args":{"padding":"`;
      const tail = '"}}';
      const text = head + 'x'.repeat(SERVER_MIN_FRAME_BYTES - MARGIN - head.length - tail.length) + tail;
      const isAnswer = () => connection.frames.some((f) => (f.value as { id?: unknown })?.id === id);
      // A close ends the wait at once: a server that refuses the frame fails now, not at the end of the bound.
      const settled = connection.waitFor(
        () => isAnswer() || connection.closed,
        3 * ctx.timeouts.answerMs,
        `answer to the ${text.length}-byte request`,
      );
      connection.sendRaw(text, false, { id, cmd: 'Ping' });
      try {
        await settled;
      } catch (error) {
        return failed((error as Error).message);
      }
      if (!isAnswer())
        return failed(
          `the ${text.length}-byte request closed the connection with ${connection.closeText} instead of an answer`,
        );
      const ping = await connection.request('Ping', undefined, ctx.timeouts.answerMs);
      if (ping.kind === 'error')
        return failed(`a Ping after the large request: expected {time}, got error ${show(ping.error)}`);
      return passed(`a ${text.length}-byte request answered; the session still answers`);
    },
  },
  {
    id: 'frames.non-json',
    name: 'a text frame that is not JSON closes the connection with 1007',
    timeoutMs: (t) => 3 * t.answerMs,
    run: (ctx) => closesWith1007(ctx, 'this is not JSON', false, 'a non-JSON text frame'),
  },
  {
    id: 'frames.binary',
    name: 'a binary frame closes the connection with 1007',
    timeoutMs: (t) => 3 * t.answerMs,
    run: (ctx) => closesWith1007(ctx, Buffer.from('{"id":77,"cmd":"Ping"}'), true, 'a binary frame'),
  },
  {
    id: 'frames.no-id',
    name: 'a request without a numeric id closes the connection with 1007',
    timeoutMs: (t) => 3 * t.answerMs,
    run: (ctx) => closesWith1007(ctx, '{"cmd":"Ping"}', false, 'a request without an id'),
  },
];
