// The page's decoders of the stream's binary geometry and surface frames, under node's
// test runner: `node --test tests/browser/geometry.test.mjs`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeGeometryFrame, decodeSurfaceFrame, frameMagic } from '../../crates/server/web/geometry.js';

/** A frame as docs/protocol.md lays it out, from plain arrays. */
function frame({ magic = 'HGEO', version = 1, index, positions, indices, extra = 0 }) {
  const bytes = new ArrayBuffer(20 + 4 * positions.length + 4 * indices.length + extra);
  const view = new DataView(bytes);
  [...magic].forEach((c, i) => view.setUint8(i, c.charCodeAt(0)));
  [version, index, positions.length / 3, indices.length / 3].forEach((v, i) => view.setUint32(4 + 4 * i, v, true));
  positions.forEach((v, i) => view.setFloat32(20 + 4 * i, v, true));
  indices.forEach((v, i) => view.setUint32(20 + 4 * positions.length + 4 * i, v, true));
  return bytes;
}

const triangle = { index: 2, positions: [0, 0, 0, 0.01, 0, 0, 0, 0.02, -0.5], indices: [0, 1, 2] };

test('decodes the index, the vertices in metres and the triangles', () => {
  const decoded = decodeGeometryFrame(frame(triangle));
  assert.equal(decoded.index, 2);
  assert.deepEqual([...decoded.positions], triangle.positions.map(Math.fround));
  assert.deepEqual([...decoded.indices], [0, 1, 2]);
});

test('refuses a frame that is not a version 1 HGEO frame', () => {
  assert.throws(() => decodeGeometryFrame(frame({ ...triangle, magic: 'HGEX' })), /magic/);
  assert.throws(() => decodeGeometryFrame(frame({ ...triangle, version: 2 })), /version 2/);
  assert.throws(() => decodeGeometryFrame(new ArrayBuffer(12)), /shorter than its header/);
});

test('refuses a frame whose length or indices disagree with its counts', () => {
  assert.throws(() => decodeGeometryFrame(frame({ ...triangle, extra: 4 })), /expected/);
  assert.throws(() => decodeGeometryFrame(frame({ ...triangle, indices: [0, 1, 3] })), /out of range/);
});

/** A surface frame as docs/protocol.md lays it out. */
function surface({ magic = 'HDEF', index, step, positions, extra = 0 }) {
  const bytes = new ArrayBuffer(20 + 4 * positions.length + extra);
  const view = new DataView(bytes);
  [...magic].forEach((c, i) => view.setUint8(i, c.charCodeAt(0)));
  view.setUint32(4, index, true);
  view.setUint32(8, positions.length / 3, true);
  view.setBigUint64(12, BigInt(step), true);
  positions.forEach((v, i) => view.setFloat32(20 + 4 * i, v, true));
  return bytes;
}

const sheet = { index: 1, step: 4097, positions: [0, 0, 0.35, 0.5, -0.25, 0.3, 1e-3, 2, -7] };

test('decodes a surface frame: its deformable, step and world vertices', () => {
  assert.equal(frameMagic(surface(sheet)), 'HDEF');
  assert.equal(frameMagic(frame(triangle)), 'HGEO');
  const decoded = decodeSurfaceFrame(surface(sheet));
  assert.equal(decoded.index, 1);
  assert.equal(decoded.step, 4097);
  assert.deepEqual([...decoded.positions], sheet.positions.map(Math.fround));
});

test('refuses a surface frame of another magic, too short or of the wrong length', () => {
  assert.throws(() => decodeSurfaceFrame(surface({ ...sheet, magic: 'HGEO' })), /magic/);
  assert.throws(() => decodeSurfaceFrame(new ArrayBuffer(16)), /shorter than its header/);
  assert.throws(() => decodeSurfaceFrame(surface({ ...sheet, extra: 4 })), /expected for 3 vertices/);
});
