// The visualizer's entry point: connects to the state stream and feeds the
// 3D view, the plots and the panels (docs/visualizer.md).

import { streamUrl } from './api.js';
import { Controls } from './controls.js';
import { decodeGeometryFrame, decodeSurfaceFrame, frameMagic } from './geometry.js';
import { Plots } from './plots.js';
import { COLORS, SceneView } from './scene-view.js';

// Every contact the stream allows, at a rate the plots and the eye need.
const STREAM_QUERY = { rate_hz: 30, contacts: 256 };
const MAX_EVENTS = 100;
const $ = (id) => document.getElementById(id);

const state = {
  connected: false,
  hello: null,
  ticks: 0,
  generation: null,
  lastTick: null,
  lastError: null,
};

function recordError(message) {
  state.lastError = message;
  $('last-error').textContent = message;
}

const view = new SceneView($('view'));
const plots = new Plots($('plots'));
const controls = new Controls({
  status: $('status'),
  parameters: $('parameters'),
  generation: $('generation'),
  recording: $('recording'),
  scene: $('scene'),
}, recordError);

$('see-through').querySelector('input').addEventListener('change', (e) => view.setSeeThrough(e.target.checked));

for (const kind of ['normal', 'static', 'sliding']) {
  $(`legend-${kind}`).style.color = `#${COLORS[kind].toString(16).padStart(6, '0')}`;
}

// --- the stream ---

let retryMs = 500;

function connect() {
  const socket = new WebSocket(streamUrl(STREAM_QUERY));
  socket.binaryType = 'arraybuffer';
  socket.onopen = () => {
    retryMs = 500;
    setConnection(true, 'connected');
  };
  socket.onmessage = ({ data }) => {
    try {
      if (typeof data === 'string') onText(JSON.parse(data), socket);
      else if (frameMagic(data) === 'HDEF') view.applySurface(decodeSurfaceFrame(data));
      else view.setGeometry(decodeGeometryFrame(data));
    } catch (e) {
      recordError(`stream: ${e.message}`);
    }
  };
  socket.onclose = ({ code, reason }) => {
    setConnection(false, `disconnected (${code}${reason ? ` ${reason}` : ''}); retrying`);
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  };
}

function setConnection(connected, text) {
  state.connected = connected;
  const element = $('connection');
  element.textContent = text;
  element.className = connected ? 'ok' : 'error';
}

function onText(message, socket) {
  switch (message.type) {
    case 'hello':
      // A new scene's servo starts its time again at 0: subscribing again
      // restarts this client's frame schedule, so its ticks come at once.
      socket.send(JSON.stringify({ type: 'subscribe', ...STREAM_QUERY }));
      state.hello = message;
      state.generation = message.generation;
      view.setScene(message);
      controls.setScene(message);
      plots.clear();
      $('scene-name').textContent = message.scene ?? '';
      logEvent(`hello: ${message.scene}, ${message.objects.length} objects, ` +
        `${(message.deformables ?? []).length} deformables, ${message.servo_rate_hz} Hz servo`);
      break;
    case 'tick':
      state.ticks += 1;
      state.generation = message.generation;
      state.lastTick = message;
      view.applyTick(message);
      plots.push(message);
      break;
    case 'event':
      onEvent(message);
      break;
    case 'error':
      recordError(`stream ${message.code}: ${message.message}`);
      break;
    default:
      break;
  }
}

function onEvent(event) {
  const { type: _, tick, event: name, ...rest } = event;
  logEvent(`tick ${tick}: ${name} ${Object.entries(rest).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}`);
  if (name === 'parameters') controls.loadParameters();
  // The event may trail a later start or stop: ask for the recording now.
  if (name === 'recording') controls.loadRecording();
}

function logEvent(text) {
  const list = $('events');
  const item = document.createElement('li');
  item.textContent = text;
  list.prepend(item);
  while (list.children.length > MAX_EVENTS) list.lastChild.remove();
}

// --- the heads-up line over the 3D view, refreshed with the display ---

function refreshHud() {
  const t = state.lastTick;
  if (t) {
    const force = Math.hypot(...t.force_n);
    const rendered = Math.hypot(...t.rendered_force_n);
    const omitted = t.contact_points_omitted ? ` (+${t.contact_points_omitted} not drawn)` : '';
    $('hud').textContent = [
      `tick ${t.tick}  t ${t.time_s.toFixed(2)} s  generation ${t.generation}`,
      `${t.state} · ${t.verdict} · safety ${t.safety_state}${t.clutched ? ' · clutched' : ''}`,
      `contacts ${t.contacts}${omitted}  |F| ${force.toFixed(2)} N (rendered ${rendered.toFixed(2)} N)`,
      `compute ${t.compute_us.toFixed(0)} µs  wake-up ${t.wake_latency_us.toFixed(0)} µs  misses ${t.deadline_misses}`,
      `dropped ${t.dropped} (servo ${t.servo_dropped})`,
    ].join('\n');
    $('arrow-scale').textContent = view.metresPerNewton > 0
      ? `arrows: 1 cm = ${formatForce(0.01 / view.metresPerNewton)}`
      : '';
  }
  requestAnimationFrame(refreshHud);
}

function formatForce(newtons) {
  if (newtons >= 1) return `${newtons.toPrecision(3)} N`;
  if (newtons >= 1e-3) return `${(newtons * 1e3).toPrecision(3)} mN`;
  return `${(newtons * 1e6).toPrecision(3)} µN`;
}

// Read-only figures for tests and the console: what the scene graph and the
// plots hold now, and what the stream has delivered.
window.hapticdView = Object.freeze({
  get meshes() { return view.census().meshes; },
  get arrows() { return view.census().arrows; },
  get deformables() { return view.deformableCensus(); },
  get plots() { return plots.census(); },
  get ticks() { return state.ticks; },
  get generation() { return state.generation; },
  get lastError() { return state.lastError; },
  get connected() { return state.connected; },
  get scene() { return state.hello?.scene ?? null; },
  get framed() { return view.framed; },
  colors: COLORS,
  screenBoxes: () => view.screenBoxes(),
});

connect();
refreshHud();
