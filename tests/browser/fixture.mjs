// A stand-in for the daemon's HTTP side, for working on the page alone:
// serves crates/server/web/ at / and replays a canned stream (a cube pressed
// onto a slab, sliding back and forth) with the API of docs/protocol.md.
// Takes `hapticd run`'s server flags, so visualizer.mjs can run it as the daemon:
//
//   node tests/browser/fixture.mjs run --config FILE --listen ADDR --port-file FILE

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../../crates/server/web/', import.meta.url));
const { values: args } = parseArgs({
  allowPositionals: true,
  options: { config: { type: 'string' }, listen: { type: 'string', default: '127.0.0.1:7878' }, 'port-file': { type: 'string' } },
});
const token = args.config ? readFileSync(args.config, 'utf8').match(/^token = "(.*)"$/m)?.[1] : undefined;
let scene = args.config ?? 'fixture';
let recording = null;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

const params = {
  generation: 0,
  materials: { wood: { friction_coefficient: 0.5, contact_stiffness_n_per_m: 200.0 } },
  rendering: { static_damping: 0.6, pyramid_sides: 8, anti_stickiness: true, friction: 'pre_sliding' },
};
const objects = [
  { index: 0, name: 'cube', tool: true, role: 'point_shell', movable: false, ...box([0.025, 0.025, 0.025]) },
  { index: 1, name: 'slab', tool: false, role: 'field', movable: false, ...box([0.1, 0.06, 0.01]) },
];
let tick = 0;
const clients = new Set();

function box([a, b, c]) {
  const v = [];
  for (let i = 0; i < 8; i++) v.push(i & 1 ? a : -a, i & 2 ? b : -b, i & 4 ? c : -c);
  const faces = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
  const t = faces.flatMap(([p, q, r, s]) => [p, q, r, p, r, s]);
  return { positions: v, indices: t, vertices: 8, triangles: 12 };
}

function geometryFrame({ index, positions, indices }) {
  const buffer = Buffer.alloc(20 + 4 * positions.length + 4 * indices.length);
  buffer.write('HGEO', 0, 'latin1');
  [1, index, positions.length / 3, indices.length / 3].forEach((v, i) => buffer.writeUInt32LE(v, 4 + 4 * i));
  positions.forEach((v, i) => buffer.writeFloatLE(v, 20 + 4 * i));
  indices.forEach((v, i) => buffer.writeUInt32LE(v, 20 + 4 * positions.length + 4 * i));
  return buffer;
}

function tickFrame() {
  const time = tick / 1000;
  const x = 0.03 * Math.sin(time);
  const sliding = Math.abs(Math.cos(time)) > 0.5;
  const corners = [[-1, -1], [1, -1], [-1, 1], [1, 1]];
  const mu = params.materials.wood.friction_coefficient;
  return {
    type: 'tick', tick, time_s: time,
    tool: { position_m: [x, 0, 0.0348], orientation_wijk: [1, 0, 0, 0] },
    manipulandum: { position_m: [x + 0.004, 0, 0.032], orientation_wijk: [1, 0, 0, 0] },
    environment: [{ position_m: [0, 0, 0], orientation_wijk: [1, 0, 0, 0] }],
    force_n: [-1, 0, 2], torque_n_m: [0, 0.01, 0], rendered_force_n: [-1, 0, 2], rendered_torque_n_m: [0, 0.01, 0],
    contacts: 4, state: sliding ? 'sliding' : 'static', verdict: sliding ? 'sliding' : 'static',
    safety_state: 'normal', clutched: false, compute_us: 40 + 5 * Math.random(), wake_latency_us: 12,
    deadline_misses: 0, generation: params.generation,
    contact_points: corners.map(([i, j]) => ({
      object: 1, position_m: [x + 0.025 * i, 0.025 * j, 0.01], normal: [0, 0, 1],
      normal_force_n: [0, 0, 0.5], friction_force_n: [-0.5 * mu, 0, 0], static: !sliding,
    })),
    contact_points_omitted: 0, dropped: 0, servo_dropped: 0,
  };
}

function reply(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function api(req, res, url) {
  let body = '';
  for await (const chunk of req) body += chunk;
  const route = `${req.method} ${url.pathname}`;
  if (token && req.headers.authorization !== `Bearer ${token}` && url.searchParams.get('token') !== token) {
    return reply(res, 401, { ok: false, error: { code: 'unauthorized', message: 'token required' } });
  }
  if (route === 'GET /v1/recording') return reply(res, 200, { ok: true, data: recording });
  if (route === 'POST /v1/recording') {
    recording = { path: JSON.parse(body).path, ticks: 0 };
    writeFileSync(recording.path, 'tick\n');
    return reply(res, 200, { ok: true, data: recording });
  }
  if (route === 'DELETE /v1/recording') {
    const finished = recording;
    recording = null;
    return reply(res, 200, { ok: true, data: finished });
  }
  if (route === 'POST /v1/scene') {
    scene = JSON.parse(body).path;
    for (const client of clients) sendHello(client);
    return reply(res, 200, { ok: true, data: { scene } });
  }
  if (route === 'GET /v1/status') return reply(res, 200, { ok: true, data: { scene: 'fixture', ticks: tick, stream_clients: clients.size } });
  if (route === 'GET /v1/parameters') return reply(res, 200, { ok: true, data: params });
  if (route === 'GET /v1/scene') {
    const list = objects.map(({ index, name, role, tool, movable }) => ({ index, name, role, tool, movable, material: tool ? 'default' : 'wood' }));
    return reply(res, 200, { ok: true, data: { file: scene, servo_rate_hz: 1000, objects: list } });
  }
  if (route === 'PATCH /v1/parameters') {
    const patch = JSON.parse(body);
    const mu = patch.materials?.wood?.friction_coefficient;
    if (mu !== undefined && !(mu >= 0)) {
      return reply(res, 422, { ok: false, error: { code: 'invalid_parameter', message: 'must be at least 0', field: 'materials.wood.friction_coefficient' } });
    }
    if (mu !== undefined) params.materials.wood.friction_coefficient = mu;
    Object.assign(params.rendering, patch.rendering ?? {});
    params.generation += 1;
    broadcast(JSON.stringify({ type: 'event', tick, event: 'parameters', generation: params.generation }));
    return reply(res, 200, { ok: true, data: { generation: params.generation, applied_tick: tick } });
  }
  return reply(res, 404, { ok: false, error: { code: 'not_found', message: `no ${route}` } });
}

// A WebSocket server's side, for sending only: RFC 6455 handshake and
// unmasked frames.
function upgrade(req, socket) {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  const client = { send: (data) => socket.write(wsFrame(data)) };
  clients.add(client);
  socket.on('close', () => clients.delete(client));
  socket.on('error', () => clients.delete(client));
  sendHello(client);
}

function sendHello(client) {
  client.send(JSON.stringify({
    type: 'hello', protocol: 1, scene, servo_rate_hz: 1000, rate_hz: 60, contacts: 64,
    generation: params.generation,
    objects: objects.map(({ index, name, tool, role, movable, vertices, triangles }) => ({ index, name, tool, role, movable, vertices, triangles })),
  }));
  for (const object of objects) client.send(geometryFrame(object));
}

function wsFrame(data) {
  const binary = Buffer.isBuffer(data);
  const payload = binary ? data : Buffer.from(data);
  const header = payload.length < 126 ? Buffer.from([0, payload.length])
    : payload.length < 65536 ? Buffer.from([0, 126, payload.length >> 8, payload.length & 255])
      : (() => { const h = Buffer.alloc(10); h[1] = 127; h.writeBigUInt64BE(BigInt(payload.length), 2); return h; })();
  header[0] = 0x80 | (binary ? 2 : 1);
  return Buffer.concat([header, payload]);
}

function broadcast(text) {
  for (const client of clients) client.send(text);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname.startsWith('/v1/')) return api(req, res, url);
  const path = normalize(join(root, url.pathname === '/' ? 'index.html' : url.pathname));
  if (!path.startsWith(root)) return reply(res, 404, {});
  try {
    const data = await readFile(path);
    res.writeHead(200, { 'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream' });
    res.end(data);
  } catch {
    reply(res, 404, { ok: false, error: { code: 'not_found', message: url.pathname } });
  }
});
server.on('upgrade', upgrade);
const [host, port] = args.listen.split(':');
server.listen(Number(port), host, () => {
  const address = `${host}:${server.address().port}`;
  if (args['port-file']) writeFileSync(args['port-file'], `${address}\n`);
  console.log(`fixture on http://${address}/`);
});
process.on('SIGINT', () => process.exit(0));
setInterval(() => {
  tick += 17;
  broadcast(JSON.stringify(tickFrame()));
}, 17);
