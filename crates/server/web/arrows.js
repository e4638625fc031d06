// Contact force arrows in two draw calls, however many there are: the
// shafts as one set of line segments, the heads as instances of one cone,
// each arrow with its own colour. Drawn over the meshes, since contacts lie
// between surfaces where the meshes would hide them.

import * as THREE from 'three';

const UP = new THREE.Vector3(0, 1, 0);
// Transparent (though opaque) so that they are drawn with, and by their
// renderOrder after, the translucent ghost and environment.
const overlay = { depthTest: false, depthWrite: false, transparent: true };

export class ContactArrows extends THREE.Group {
  /** `colors`: the colour of each kind of arrow, as hex numbers. */
  constructor(colors, capacity = 512) {
    super();
    this.colors = colors;
    this.kinds = [];
    this.allocate(capacity);
  }

  allocate(capacity) {
    for (const child of [...this.children]) {
      child.geometry.dispose();
      child.material.dispose();
      this.remove(child);
    }
    this.capacity = capacity;
    const shafts = new THREE.BufferGeometry();
    for (const name of ['position', 'color']) {
      shafts.setAttribute(name, new THREE.BufferAttribute(new Float32Array(6 * capacity), 3)
        .setUsage(THREE.DynamicDrawUsage));
    }
    this.shafts = new THREE.LineSegments(shafts, new THREE.LineBasicMaterial({ vertexColors: true, ...overlay }));
    // A unit cone with its base at the origin and its tip at +y.
    const cone = new THREE.ConeGeometry(0.5, 1, 12).translate(0, 0.5, 0);
    this.heads = new THREE.InstancedMesh(cone, new THREE.MeshBasicMaterial(overlay), capacity);
    this.heads.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    this.heads.setColorAt(0, new THREE.Color()); // the colours' buffer exists from the first draw
    for (const part of [this.shafts, this.heads]) {
      part.renderOrder = 1;
      part.frustumCulled = false;
    }
    this.add(this.shafts, this.heads);
    this.setArrows([], 0);
  }

  /**
   * Replaces the arrows with `arrows`, each `{origin, vector, kind}`
   * (THREE.Vector3 in metres, a key of `colors`); heads are a third of an
   * arrow's length, at most `maxHead` (m).
   */
  setArrows(arrows, maxHead) {
    if (arrows.length > this.capacity) {
      this.allocate(2 ** Math.ceil(Math.log2(arrows.length)));
    }
    const positions = this.shafts.geometry.attributes.position;
    const colors = this.shafts.geometry.attributes.color;
    const direction = new THREE.Vector3();
    const base = new THREE.Vector3();
    const rotation = new THREE.Quaternion();
    const size = new THREE.Vector3();
    const matrix = new THREE.Matrix4();
    const color = new THREE.Color();
    arrows.forEach(({ origin, vector, kind }, i) => {
      const length = vector.length();
      const head = Math.min(length / 3, maxHead);
      direction.copy(vector).divideScalar(length);
      base.copy(origin).addScaledVector(direction, length - head);
      color.set(this.colors[kind]);
      positions.setXYZ(2 * i, origin.x, origin.y, origin.z);
      positions.setXYZ(2 * i + 1, base.x, base.y, base.z);
      colors.setXYZ(2 * i, color.r, color.g, color.b);
      colors.setXYZ(2 * i + 1, color.r, color.g, color.b);
      rotation.setFromUnitVectors(UP, direction);
      size.set(0.6 * head, head, 0.6 * head);
      this.heads.setMatrixAt(i, matrix.compose(base, rotation, size));
      this.heads.setColorAt(i, color);
    });
    this.kinds = arrows.map((a) => a.kind);
    this.shafts.geometry.setDrawRange(0, 2 * arrows.length);
    positions.needsUpdate = true;
    colors.needsUpdate = true;
    this.heads.count = arrows.length;
    this.heads.instanceMatrix.needsUpdate = true;
    if (this.heads.instanceColor) this.heads.instanceColor.needsUpdate = true;
  }

  /** Arrows drawn now, by kind and in all, as the instanced mesh holds them. */
  census() {
    const counts = { total: this.heads.count };
    for (const kind of Object.keys(this.colors)) counts[kind] = 0;
    for (const kind of this.kinds.slice(0, this.heads.count)) counts[kind] += 1;
    return counts;
  }
}
