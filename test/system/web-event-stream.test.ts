import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { describe, it } from 'node:test';
import { EventStreams } from '../../src/web/event-stream.js';
import { EventReader } from '../helpers/event-stream.js';

/** The server-sent event streams of the web interface on a real HTTP server, with a short heartbeat. */
describe('web event streams', () => {
  it('send events and heartbeat comments, and end when the server closes', async () => {
    const streams = new EventStreams(100);
    const app = Fastify();
    app.addHook('preClose', (done) => {
      streams.closeAll();
      done();
    });
    app.get('/stream', async (_request, reply) => {
      const stream = streams.start(reply);
      stream.send('hello', { text: 'line one\nline two </script>' });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const events = await EventReader.open(`http://127.0.0.1:${port}/stream`);
    assert.deepEqual(await events.next(), { event: 'hello', data: { text: 'line one\nline two </script>' } });
    await events.waitForComments(2, 3000);
    assert.deepEqual(events.comments.slice(0, 2), [': heartbeat', ': heartbeat']);
    await app.close();
    assert.equal(await events.next(), undefined, 'the stream ended with the server');
  });
});
