// The web visualizer's end-to-end test, run by scripts/test-browser: starts
// `hapticd run` on the corner scene behind a bearer token, opens the page
// in headless Chromium with `?token=`, and checks what a user would see:
// the scene and the contact arrows in the three.js scene graph and in the
// canvas's pixels, plots that advance, a parameter patched through the
// panel reaching the stream, a refused value shown next to its field,
// recording through the panel, the peg-in-hole scene loaded through
// the panel, and the Fig. 3 cloth scene loaded through the panel, its
// cloth's surface a mesh in the scene graph that the stream moves in
// place. Saves a screenshot of each scene. Exits 1 on the first failed
// check; prints headline figures last.
//
//   node tests/browser/visualizer.mjs --hapticd PATH --figures DIR

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: args } = parseArgs({
  options: {
    hapticd: { type: 'string' },
    figures: { type: 'string', default: 'docs/figures' },
  },
});
if (!args.hapticd) throw new Error('usage: visualizer.mjs --hapticd PATH [--figures DIR]');

const REPO = resolve(new URL('../..', import.meta.url).pathname);
const TOKEN = 'browser-test-token';
const CORNER = 'config/default.toml';
const PEG = 'config/peg-in-hole.toml';
const CLOTH = 'config/fig3-cloth-on-ball.toml';
// The Fig. 3 cloth: 51 × 51 nodes, two triangles per cell.
const CLOTH_VERTICES = 51 * 51;
const CLOTH_TRIANGLES = 2 * 50 * 50;
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // WebGL on the CPU (SwiftShader), as there is no GPU.
  '--enable-unsafe-swiftshader',
];
const VIEWPORT = { width: 1400, height: 860 };
// Pixels of the arrows' colours that show the contacts are drawn: a few
// arrow heads' worth.
const MIN_ARROW_PIXELS = 50;
// Seconds of each scene in the plots before its screenshot.
const FIGURE_PLOT_S = 4;

const work = mkdtempSync(join(tmpdir(), 'hapticd-browser-'));
const figures = [];
let passed = 0;
let daemon;
let daemonLog = '';
let browser;

/** Runs one named check; the first failure ends the test. */
async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    console.log(`not ok - ${name}: ${e.message}`);
    e.reported = true;
    throw e;
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

function figure(name, value, unit) {
  figures.push(`${name}: ${value} ${unit}`);
}

// --- the daemon ---

/** The corner scene with a bearer token in its [server] table. */
function tokenConfig() {
  const text = readFileSync(join(REPO, CORNER), 'utf8');
  const line = `token = "${TOKEN}"`;
  const withToken = /^\[server\]\s*$/m.test(text)
    ? text.replace(/^\[server\]\s*$/m, `[server]\n${line}`)
    : `${text}\n[server]\n${line}\n`;
  const path = join(work, 'corner.toml');
  writeFileSync(path, withToken);
  return path;
}

async function startDaemon() {
  const portFile = join(work, 'port');
  daemon = spawn(args.hapticd, ['run', '--config', tokenConfig(), '--listen', '127.0.0.1:0', '--port-file', portFile],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HAPTICD_LOG: 'warn' } });
  daemon.stdout.on('data', (d) => { daemonLog += d; });
  daemon.stderr.on('data', (d) => { daemonLog += d; });
  const exited = new Promise((_, reject) => daemon.on('exit', (code) => reject(new Error(`hapticd exited with ${code}`))));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const text = existsSync(portFile) ? readFileSync(portFile, 'utf8').trim() : '';
    const port = Number(text.match(/(\d+)$/)?.[1]);
    if (port > 0) return port;
    await Promise.race([sleep(100), exited]);
  }
  throw new Error('hapticd wrote no port file within 60 s');
}

let base;

/** An API call from the test itself (not the page), with the token. */
async function api(method, path, body) {
  const reply = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: reply.status, json: await reply.json() };
}

// --- the page ---

const view = (page) => page.evaluate(() => ({
  meshes: hapticdView.meshes,
  arrows: hapticdView.arrows,
  plots: hapticdView.plots,
  ticks: hapticdView.ticks,
  generation: hapticdView.generation,
  lastError: hapticdView.lastError,
  scene: hapticdView.scene,
  deformables: hapticdView.deformables,
}));

/**
 * After the next two frames are drawn, the scene graph's census and the
 * canvas's pixels read back: per object, the share of its screen box that
 * is not background, and the pixels of each arrow colour.
 */
const pixels = (page) => page.evaluate(async () => {
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const canvas = document.querySelector('#view canvas');
  const scale = canvas.width / canvas.clientWidth;
  const copy = Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height });
  const context = copy.getContext('2d');
  context.drawImage(canvas, 0, 0);
  const { data } = context.getImageData(0, 0, copy.width, copy.height);
  const rgb = (hex) => [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];
  const { colors } = hapticdView;
  const background = rgb(colors.background);
  const near = (i, [r, g, b], tolerance) =>
    Math.abs(data[i] - r) <= tolerance && Math.abs(data[i + 1] - g) <= tolerance && Math.abs(data[i + 2] - b) <= tolerance;

  const objects = hapticdView.screenBoxes().map(({ name, x0, y0, x1, y1 }) => {
    const [left, top] = [Math.max(0, Math.floor(x0 * scale)), Math.max(0, Math.floor(y0 * scale))];
    const [right, bottom] = [Math.min(copy.width, Math.ceil(x1 * scale)), Math.min(copy.height, Math.ceil(y1 * scale))];
    let drawn = 0;
    for (let y = top; y < bottom; y++) {
      for (let x = left; x < right; x++) if (!near(4 * (y * copy.width + x), background, 6)) drawn += 1;
    }
    const area = Math.max(1, (right - left) * (bottom - top));
    return { name, drawn, coverage: drawn / area };
  });
  const arrowPixels = { normal: 0, static: 0, sliding: 0 };
  const kinds = Object.keys(arrowPixels).map((k) => [k, rgb(colors[k])]);
  for (let i = 0; i < data.length; i += 4) {
    for (const [kind, colour] of kinds) if (near(i, colour, 24)) arrowPixels[kind] += 1;
  }
  return { objects, arrowPixels, arrows: hapticdView.arrows, meshes: hapticdView.meshes };
});

/** Waits until the plots hold `seconds` of the scene, for the figures. */
async function plotsSpan(page, seconds) {
  await page.waitForFunction((s) => hapticdView.plots.lastX >= s, seconds, { timeout: 30_000 });
}

/** Waits until the tool is in contact and the arrows show in the pixels too. */
async function contactPixels(page, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await pixels(page);
    const arrowPixels = last.arrowPixels.normal + last.arrowPixels.static + last.arrowPixels.sliding;
    if (last.arrows.total > 0 && arrowPixels >= MIN_ARROW_PIXELS) return { ...last, arrowPixels };
    await sleep(200);
  }
  throw new Error(`no contact arrows drawn within ${timeoutMs / 1000} s (last: ${JSON.stringify(last?.arrows)})`);
}

function checkScene(p, objects) {
  assert(p.meshes.tool === 1 && p.meshes.manipulandum === 1 && p.meshes.environment === objects - 1,
    `scene graph meshes ${JSON.stringify(p.meshes)}, expected 1 tool, 1 manipulandum, ${objects - 1} environment`);
  for (const o of p.objects) {
    assert(o.coverage > 0.1, `object ${o.name} covers ${(100 * o.coverage).toFixed(1)} % of its screen box`);
  }
}

async function run() {
  const port = await startDaemon();
  base = `http://127.0.0.1:${port}`;
  await check('the API refuses a request without the token', async () => {
    const reply = await fetch(`${base}/v1/status`);
    assert(reply.status === 401, `GET /v1/status without a token: HTTP ${reply.status}`);
  });

  const userDataDir = join(work, 'chromium');
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, viewport: VIEWPORT,
  });
  const page = browser.pages()[0] ?? await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${base}/?token=${TOKEN}`);

  await check('the page connects and draws the corner scene from the stream', async () => {
    await page.waitForFunction(() => window.hapticdView?.framed && hapticdView.ticks > 10, null, { timeout: 30_000 });
    const v = await view(page);
    assert(v.scene !== null && v.lastError === null, `scene ${v.scene}, last error ${v.lastError}`);
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join('; ')}`);
  });

  let cornerPixels;
  await check('the corner scene and its contact arrows are in the scene graph and the pixels', async () => {
    await plotsSpan(page, FIGURE_PLOT_S);
    cornerPixels = await contactPixels(page, 20_000);
    checkScene(cornerPixels, 2);
  });
  await page.screenshot({ path: join(args.figures, 'visualizer-corner.png') });
  figure('corner_meshes', cornerPixels.meshes.tool + cornerPixels.meshes.environment + cornerPixels.meshes.manipulandum, 'meshes');
  figure('corner_triangles', cornerPixels.meshes.triangles, 'triangles');
  figure('corner_arrows', cornerPixels.arrows.total, 'arrows');
  figure('corner_arrow_pixels', cornerPixels.arrowPixels, 'px');

  await check('the plots advance', async () => {
    const before = await view(page);
    await sleep(2000);
    const after = await view(page);
    assert(after.plots.charts === 8, `${after.plots.charts} charts`);
    assert(after.plots.points > before.plots.points || after.plots.lastX > before.plots.lastX,
      `plots did not advance: ${JSON.stringify(before.plots)} then ${JSON.stringify(after.plots)}`);
    // Tick frames per second of servo time: the stream's decimated rate.
    const rate = (after.ticks - before.ticks) / (after.plots.lastX - before.plots.lastX);
    figure('stream_frame_rate', rate.toFixed(1), 'Hz');
    figure('plot_points', after.plots.points, 'points');
  });

  let before, material, field, form, mu;
  await check('the parameters and the scene are served', async () => {
    before = (await api('GET', '/v1/parameters')).json.data;
    // The μ of the corner's material is the one the cube's contacts feel.
    const scene = (await api('GET', '/v1/scene')).json.data;
    material = scene.objects.find((o) => !o.tool).material;
    field = `materials.${material}.friction_coefficient`;
    form = page.locator(`form[data-field="${field}"]`);
    mu = before.materials[material].friction_coefficient === 0.35 ? 0.4 : 0.35;
  });

  await check(`μ (${field}) set through the panel reaches the stream`, async () => {
    const streamGeneration = (await view(page)).generation;
    await form.locator('input').fill(String(mu));
    const submitted = Date.now();
    await form.locator('button[type=submit]').click();
    await page.waitForFunction((g) => hapticdView.generation > g, streamGeneration, { timeout: 10_000 });
    figure('parameter_to_stream', Date.now() - submitted, 'ms');
    const after = (await api('GET', '/v1/parameters')).json.data;
    assert(after.materials[material].friction_coefficient === mu,
      `GET /v1/parameters shows ${after.materials[material].friction_coefficient}, not ${mu}`);
    assert(after.generation > before.generation, `generation ${before.generation} -> ${after.generation}`);
    await form.locator('.message.ok').waitFor({ timeout: 5000 });
  });

  await check(`a refused μ shows the error next to the field and changes nothing`, async () => {
    const generation = (await api('GET', '/v1/parameters')).json.data.generation;
    await form.locator('input').fill('-0.1');
    await form.locator('button[type=submit]').click();
    const shown = await form.locator('.message.error').textContent({ timeout: 10_000 });
    const refusal = await api('PATCH', '/v1/parameters', { materials: { [material]: { friction_coefficient: -0.1 } } });
    assert(refusal.status === 422 && refusal.json.error.field === field,
      `PATCH -0.1: HTTP ${refusal.status} ${JSON.stringify(refusal.json.error)}`);
    assert(shown.includes(refusal.json.error.message) && shown.includes(field),
      `shown "${shown}", refusal "${refusal.json.error.message}" for ${refusal.json.error.field}`);
    const after = (await api('GET', '/v1/parameters')).json.data;
    assert(after.generation === generation && after.materials[material].friction_coefficient === mu,
      `a refused patch changed the parameters: ${JSON.stringify(after)}`);
  });

  await check('recording starts and stops through the panel', async () => {
    const file = join(work, 'panel.csv');
    await page.locator('input[name="recording-path"]').fill(file);
    await page.getByRole('button', { name: 'Start' }).click();
    await waitFor(async () => (await api('GET', '/v1/recording')).json.data !== null, 10_000, 'recording to start');
    await sleep(500);
    await page.getByRole('button', { name: 'Stop' }).click();
    await waitFor(async () => (await api('GET', '/v1/recording')).json.data === null, 10_000, 'recording to stop');
    assert(existsSync(file) && statSync(file).size > 0, `${file} is missing or empty`);
    figure('recorded_bytes', statSync(file).size, 'bytes');
  });

  let pegPixels;
  await check('the peg-in-hole scene loads through the panel and shows its contacts', async () => {
    await page.locator('input[name="scene-path"]').fill(PEG);
    const started = Date.now();
    await page.getByRole('button', { name: 'Load' }).click();
    await page.waitForFunction((peg) => hapticdView.scene === peg && hapticdView.framed, PEG, { timeout: 300_000 });
    figure('peg_scene_load', ((Date.now() - started) / 1000).toFixed(1), 's');
    // The contacts are inside the block.
    await page.locator('#see-through input').check();
    await plotsSpan(page, FIGURE_PLOT_S);
    pegPixels = await contactPixels(page, 30_000);
    checkScene(pegPixels, 2);
    const v = await view(page);
    assert(v.lastError === null && pageErrors.length === 0, `errors: ${v.lastError} ${pageErrors.join('; ')}`);
  });
  await page.screenshot({ path: join(args.figures, 'visualizer-peg-in-hole.png') });
  figure('peg_triangles', pegPixels.meshes.triangles, 'triangles');
  figure('peg_arrows', pegPixels.arrows.total, 'arrows');
  figure('peg_arrow_pixels', pegPixels.arrowPixels, 'px');

  let cloth;
  await check('the cloth scene loads through the panel and its cloth is a mesh the stream moves', async () => {
    await page.locator('#see-through input').uncheck();
    await page.locator('input[name="scene-path"]').fill(CLOTH);
    const started = Date.now();
    await page.getByRole('button', { name: 'Load' }).click();
    await page.waitForFunction((cloth) => hapticdView.scene === cloth && hapticdView.framed
      && hapticdView.deformables.length === 1 && hapticdView.deformables[0].frames > 0, CLOTH, { timeout: 300_000 });
    figure('cloth_scene_load', ((Date.now() - started) / 1000).toFixed(1), 's');
    const before = (await view(page)).deformables[0];
    assert(before.name === 'cloth' && before.vertices === CLOTH_VERTICES && before.triangles === CLOTH_TRIANGLES,
      `the cloth's mesh: ${JSON.stringify(before)}`);
    assert(before.visible && before.inScene, `the cloth's mesh is not drawn in the scene: ${JSON.stringify(before)}`);
    const meshes = (await view(page)).meshes;
    assert(meshes.deformable === 1 && meshes.environment === 1 && meshes.tool === 1,
      `scene graph meshes ${JSON.stringify(meshes)}`);
    await sleep(1500);
    const after = await page.evaluate(() => hapticdView.deformables[0]);
    assert(after.frames > before.frames && after.step > before.step,
      `no new surface frames in 1.5 s: ${before.frames} frames (step ${before.step}) then ${after.frames} (step ${after.step})`);
    assert(after.geometryId === before.geometryId, 'the mesh was replaced, not updated in place');
    // From the first frame (the sheet released flat) it has fallen onto
    // the ball: its vertices moved, its centroid dropped.
    assert(after.moved > 0.02, `the cloth's vertices moved ${after.moved} m at most since the first frame`);
    assert(after.centroid[2] < 0.35 - 0.02, `the cloth's centroid is at z = ${after.centroid[2]} m`);
    const v = await view(page);
    assert(v.lastError === null && pageErrors.length === 0, `errors: ${v.lastError} ${pageErrors.join('; ')}`);
    cloth = { before, after };
  });
  await page.screenshot({ path: join(args.figures, 'visualizer-cloth.png') });
  figure('cloth_surface_frames_per_s', ((cloth.after.frames - cloth.before.frames) / 1.5).toFixed(1), 'Hz');
  figure('cloth_moved', cloth.after.moved.toFixed(3), 'm');
}

async function waitFor(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

let failed = 0;
try {
  await run();
} catch (e) {
  failed = 1;
  if (!e.reported) console.log(`not ok - ${e.message}`);
  console.log(`hapticd's log:\n${daemonLog.slice(-4000)}`);
} finally {
  await browser?.close();
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((r) => daemon.once('exit', r));
    daemon.kill('SIGINT');
    await Promise.race([exited, sleep(10_000)]);
  }
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
for (const line of figures) console.log(line);
process.exit(failed ? 1 : 0);
