// Decoding of the stream's binary frames (docs/protocol.md): geometry
// frames, one per scene object, and surface frames, a deformable body's
// surface vertices after a physics step; little-endian.

const MAGIC = 'HGEO';
const VERSION = 1;
const HEADER_BYTES = 20;

/**
 * Decodes one geometry frame into `{index, positions, indices}`: object
 * frame vertex positions in metres (x y z per vertex) and three vertex
 * indices per triangle. Throws on anything that is not a well-formed
 * version 1 frame.
 */
export function decodeGeometryFrame(buffer) {
  if (buffer.byteLength < HEADER_BYTES) {
    throw new Error(`geometry frame of ${buffer.byteLength} bytes is shorter than its header`);
  }
  const view = new DataView(buffer);
  const magic = String.fromCharCode(...new Uint8Array(buffer, 0, 4));
  if (magic !== MAGIC) throw new Error(`geometry frame magic is "${magic}", not "${MAGIC}"`);
  const version = view.getUint32(4, true);
  if (version !== VERSION) throw new Error(`geometry frame version ${version} is not ${VERSION}`);
  const index = view.getUint32(8, true);
  const vertices = view.getUint32(12, true);
  const triangles = view.getUint32(16, true);
  const expected = HEADER_BYTES + 12 * vertices + 12 * triangles;
  if (buffer.byteLength !== expected) {
    throw new Error(`geometry frame of object ${index} has ${buffer.byteLength} bytes, ` +
      `${expected} expected for ${vertices} vertices and ${triangles} triangles`);
  }
  // Copy out of the frame: typed arrays over it would need 4-byte alignment
  // and the host's byte order to be little-endian.
  const positions = new Float32Array(3 * vertices);
  for (let i = 0; i < positions.length; i++) {
    positions[i] = view.getFloat32(HEADER_BYTES + 4 * i, true);
  }
  const indexOffset = HEADER_BYTES + 12 * vertices;
  const indices = new Uint32Array(3 * triangles);
  for (let i = 0; i < indices.length; i++) {
    const v = view.getUint32(indexOffset + 4 * i, true);
    if (v >= vertices) throw new Error(`geometry frame of object ${index}: vertex index ${v} out of range`);
    indices[i] = v;
  }
  return { index, positions, indices };
}

const SURFACE_MAGIC = 'HDEF';
const SURFACE_HEADER_BYTES = 20;

/** The four bytes a binary frame starts with: `HGEO` or `HDEF`. */
export function frameMagic(buffer) {
  if (buffer.byteLength < 4) throw new Error(`binary frame of ${buffer.byteLength} bytes has no magic`);
  return String.fromCharCode(...new Uint8Array(buffer, 0, 4));
}

/**
 * Decodes one surface frame into `{index, step, positions}`: the
 * deformable's index in `hello.deformables`, the physics step, and its
 * surface vertices in world coordinates (metres, x y z per vertex). Throws
 * on anything that is not a well-formed frame.
 */
export function decodeSurfaceFrame(buffer) {
  if (buffer.byteLength < SURFACE_HEADER_BYTES) {
    throw new Error(`surface frame of ${buffer.byteLength} bytes is shorter than its header`);
  }
  const magic = frameMagic(buffer);
  if (magic !== SURFACE_MAGIC) throw new Error(`surface frame magic is "${magic}", not "${SURFACE_MAGIC}"`);
  const view = new DataView(buffer);
  const index = view.getUint32(4, true);
  const vertices = view.getUint32(8, true);
  const step = Number(view.getBigUint64(12, true));
  const expected = SURFACE_HEADER_BYTES + 12 * vertices;
  if (buffer.byteLength !== expected) {
    throw new Error(`surface frame of deformable ${index} has ${buffer.byteLength} bytes, ` +
      `${expected} expected for ${vertices} vertices`);
  }
  const positions = new Float32Array(3 * vertices);
  for (let i = 0; i < positions.length; i++) {
    positions[i] = view.getFloat32(SURFACE_HEADER_BYTES + 4 * i, true);
  }
  return { index, step, positions };
}
