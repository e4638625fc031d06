// The 3D view: the scene's objects at their poses, the deformable bodies'
// surfaces as the physics thread moves them, the manipulandum as a
// translucent ghost of the tool, and the contact forces as arrows.
// Units are the stream's: metres, z up.

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { ContactArrows } from './arrows.js';

export const COLORS = Object.freeze({
  background: 0x15191e,
  tool: 0xd9a441,
  environment: 0x8d99a6,
  deformable: 0x4fb3a9,
  ghost: 0xcfe8ff,
  edges: 0x0b0d10,
  normal: 0x3d8bff,
  static: 0x2fd46a,
  sliding: 0xff6a1a,
});

// The longest contact arrow, as a fraction of the scene's bounding radius.
const ARROW_FRACTION = 0.25;

export class SceneView {
  constructor(container) {
    this.container = container;
    // The drawing buffer is kept so that its pixels can be read back.
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio);
    container.appendChild(this.renderer.domElement);

    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(COLORS.background);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.001, 10);
    this.camera.up.set(0, 0, 1);
    this.camera.position.set(0.3, -0.4, 0.3);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.enableDamping = true;
    this.renderer.domElement.addEventListener('dblclick', () => this.frame());
    this.seeThrough = false;

    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x404650, 1.6));
    // A light that follows the camera keeps the side in view lit.
    const key = new THREE.DirectionalLight(0xffffff, 1.8);
    key.position.set(0.5, 1, 1);
    this.camera.add(key);
    this.scene.add(this.camera);

    this.objects = new THREE.Group();
    this.arrows = new ContactArrows({ normal: COLORS.normal, static: COLORS.static, sliding: COLORS.sliding });
    this.scene.add(this.objects, this.arrows);
    this.clear();

    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
    this.renderer.setAnimationLoop(() => {
      this.controls.update();
      this.renderer.render(this.scene, this.camera);
    });
  }

  resize() {
    const { clientWidth: w, clientHeight: h } = this.container;
    if (w === 0 || h === 0) return;
    this.renderer.setSize(w, h);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  /** Forgets the scene: its objects, the ghost and the arrows. */
  clear() {
    for (const child of [...this.objects.children]) {
      child.traverse((o) => {
        o.material?.dispose();
        if (o.userData.ownsGeometry) o.geometry.dispose();
      });
      this.objects.remove(child);
    }
    this.arrows.setArrows([], 0);
    this.poses = new Map(); // object index -> THREE.Group carrying its pose
    // deformable index -> {mesh, frames, step, first}: its surface mesh,
    // updated in place, and the vertices of the first frame received.
    this.deformables = new Map();
    this.ghost = null;
    this.environmentIndices = [];
    this.toolIndex = null;
    this.pendingGeometry = 0;
    this.framed = false;
    this.radius = 0.1;
    this.forceScale = 0; // the largest contact force seen lately (N)
    this.metresPerNewton = 0;
  }

  /** Starts a new scene from the stream's `hello`. */
  setScene(hello) {
    this.clear();
    for (const object of hello.objects) {
      const pose = new THREE.Group();
      pose.name = object.name;
      this.poses.set(object.index, pose);
      this.objects.add(pose);
      if (object.tool) {
        this.toolIndex = object.index;
        this.ghost = new THREE.Group();
        this.ghost.name = `${object.name} (manipulandum)`;
        this.objects.add(this.ghost);
      } else {
        this.environmentIndices.push(object.index);
      }
    }
    this.pendingGeometry = hello.objects.length;
    for (const deformable of hello.deformables ?? []) this.addDeformable(deformable);
  }

  /**
   * A deformable body's surface mesh, in world coordinates, drawn once its
   * first surface frame arrives and updated in place by each.
   */
  addDeformable({ index, name, vertices, triangles }) {
    const geometry = new THREE.BufferGeometry();
    const positions = new THREE.BufferAttribute(new Float32Array(3 * vertices), 3);
    positions.setUsage(THREE.DynamicDrawUsage);
    geometry.setAttribute('position', positions);
    geometry.setIndex(new THREE.BufferAttribute(Uint32Array.from(triangles.flat()), 1));
    const mesh = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({
      color: COLORS.deformable,
      side: THREE.DoubleSide, // a cloth is seen from both sides
      roughness: 0.8,
      metalness: 0.0,
    }));
    mesh.name = name;
    mesh.visible = false;
    mesh.userData = { role: 'deformable', ownsGeometry: true };
    this.objects.add(mesh);
    this.deformables.set(index, { mesh, frames: 0, step: null, first: null });
  }

  /** Moves a deformable's surface to a decoded surface frame's vertices. */
  applySurface({ index, step, positions }) {
    const deformable = this.deformables.get(index);
    if (!deformable) throw new Error(`surface frame for deformable ${index}, which the hello does not list`);
    const { geometry } = deformable.mesh;
    const attribute = geometry.getAttribute('position');
    if (positions.length !== attribute.array.length) {
      throw new Error(`surface frame of deformable ${index} has ${positions.length / 3} vertices, ` +
        `the hello ${attribute.count}`);
    }
    attribute.array.set(positions);
    attribute.needsUpdate = true;
    geometry.computeVertexNormals();
    geometry.computeBoundingSphere();
    deformable.first ??= Float32Array.from(positions);
    deformable.frames += 1;
    deformable.step = step;
    deformable.mesh.visible = true;
  }
  /** Adds one object's decoded geometry frame. */
  setGeometry({ index, positions, indices }) {
    const pose = this.poses.get(index);
    if (!pose) throw new Error(`geometry for object ${index}, which the hello does not list`);
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
    geometry.setIndex(new THREE.BufferAttribute(indices, 1));
    geometry.computeBoundingSphere();
    const tool = index === this.toolIndex;
    const mesh = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({
      color: tool ? COLORS.tool : COLORS.environment,
      flatShading: true,
      roughness: 0.7,
      metalness: 0.05,
      polygonOffset: true, // keeps the edges drawn on top of the faces
      polygonOffsetFactor: 1,
      polygonOffsetUnits: 1,
    }));
    mesh.userData = { role: tool ? 'tool' : 'environment', ownsGeometry: true };
    if (!tool) setSeeThrough(mesh.material, this.seeThrough);
    const edges = new THREE.LineSegments(new THREE.EdgesGeometry(geometry, 30),
      new THREE.LineBasicMaterial({ color: COLORS.edges }));
    edges.userData.ownsGeometry = true;
    pose.add(mesh, edges);
    if (tool) {
      const ghost = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({
        color: COLORS.ghost, transparent: true, opacity: 0.22, depthWrite: false,
      }));
      ghost.userData = { role: 'manipulandum' };
      this.ghost.add(ghost);
    }
    this.pendingGeometry -= 1;
  }

  /** Places the objects and draws the contacts of one tick frame. */
  applyTick(tick) {
    setPose(this.poses.get(this.toolIndex), tick.tool);
    setPose(this.ghost, tick.manipulandum);
    tick.environment?.forEach((pose, i) => setPose(this.poses.get(this.environmentIndices[i]), pose));
    const surfacesPending = [...this.deformables.values()].some((d) => d.frames === 0);
    if (!this.framed && this.pendingGeometry === 0 && !surfacesPending && this.poses.size > 0) this.frame();
    this.drawContacts(tick.contact_points ?? []);
  }

  /** Draws the environment translucent, to show contacts inside it, or opaque. */
  setSeeThrough(on) {
    this.seeThrough = on;
    this.objects.traverse((o) => {
      if (o.isMesh && o.userData.role === 'environment') setSeeThrough(o.material, on);
    });
  }

  /** Points the camera at the whole scene, from the front, right and above. */
  frame() {
    this.objects.updateMatrixWorld(true);
    const box = new THREE.Box3();
    for (const pose of this.poses.values()) box.expandByObject(pose);
    for (const { mesh } of this.deformables.values()) if (mesh.visible) box.expandByObject(mesh);
    if (box.isEmpty()) return;
    const sphere = box.getBoundingSphere(new THREE.Sphere());
    this.radius = Math.max(sphere.radius, 1e-3);
    const distance = this.radius / Math.sin(THREE.MathUtils.degToRad(this.camera.fov / 2)) * 1.05;
    const direction = new THREE.Vector3(0.75, -1.5, 0.9).normalize();
    this.camera.position.copy(sphere.center).addScaledVector(direction, distance);
    this.camera.near = distance / 100;
    this.camera.far = distance * 100;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(sphere.center);
    this.controls.update();
    this.framed = true;
  }

  /**
   * One arrow for each contact's normal force and one for its friction force
   * (static or sliding), from the contact point. Lengths share one scale: the
   * largest force seen lately is ARROW_FRACTION of the scene's radius.
   */
  drawContacts(points) {
    let largest = 0;
    for (const p of points) largest = Math.max(largest, norm(p.normal_force_n), norm(p.friction_force_n));
    // Grow at once, shrink slowly, so the arrows do not pulse tick by tick.
    this.forceScale = Math.max(largest, this.forceScale * 0.98);
    this.metresPerNewton = this.forceScale > 0 ? ARROW_FRACTION * this.radius / this.forceScale : 0;

    const arrows = [];
    const add = (origin, force, kind) => {
      const vector = new THREE.Vector3().fromArray(force).multiplyScalar(this.metresPerNewton);
      if (vector.length() > 1e-6) arrows.push({ origin: new THREE.Vector3().fromArray(origin), vector, kind });
    };
    for (const p of points) {
      add(p.position_m, p.normal_force_n, 'normal');
      add(p.position_m, p.friction_force_n, p.static ? 'static' : 'sliding');
    }
    this.arrows.setArrows(arrows, 0.06 * this.radius);
  }

  /** What the scene graph holds now: object meshes, the ghost, the arrows. */
  census() {
    const meshes = { tool: 0, environment: 0, manipulandum: 0, deformable: 0, triangles: 0 };
    this.objects.traverse((o) => {
      if (o.isMesh && o.visible) {
        meshes[o.userData.role] += 1;
        meshes.triangles += o.geometry.index.count / 3;
      }
    });
    return { meshes, arrows: this.arrows.census() };
  }

  /**
   * Each deformable's surface as the scene graph holds it: its mesh's
   * vertices and triangles, whether it is drawn, the surface frames
   * applied and the last one's physics step, its vertices' centroid, and
   * how far its vertices are from the first frame's at most (m).
   */
  deformableCensus() {
    return [...this.deformables.entries()].map(([index, { mesh, frames, step, first }]) => {
      const array = mesh.geometry.getAttribute('position').array;
      const centroid = [0, 0, 0];
      let moved = 0;
      for (let i = 0; i < array.length; i += 3) {
        for (let k = 0; k < 3; k++) centroid[k] += array[i + k];
        if (first) moved = Math.max(moved, Math.hypot(array[i] - first[i], array[i + 1] - first[i + 1], array[i + 2] - first[i + 2]));
      }
      const vertices = array.length / 3;
      return {
        index, name: mesh.name, vertices, triangles: mesh.geometry.index.count / 3,
        visible: mesh.visible, inScene: mesh.parent === this.objects, geometryId: mesh.geometry.id,
        frames, step, centroid: centroid.map((c) => c / Math.max(1, vertices)), moved,
      };
    });
  }

  /** Each object's bounding box on the canvas, in CSS pixels from its top left. */
  screenBoxes() {
    this.scene.updateMatrixWorld(true);
    const { clientWidth: w, clientHeight: h } = this.renderer.domElement;
    const boxes = [];
    for (const pose of this.poses.values()) {
      const box = new THREE.Box3().setFromObject(pose);
      if (box.isEmpty()) continue;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let c = 0; c < 8; c++) {
        const v = new THREE.Vector3(c & 1 ? box.max.x : box.min.x, c & 2 ? box.max.y : box.min.y,
          c & 4 ? box.max.z : box.min.z).project(this.camera);
        const x = (v.x + 1) / 2 * w, y = (1 - v.y) / 2 * h;
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
      boxes.push({ name: pose.name, x0, y0, x1, y1 });
    }
    return boxes;
  }
}

function setSeeThrough(material, on) {
  material.transparent = on;
  material.opacity = on ? 0.3 : 1;
  material.depthWrite = !on;
  material.needsUpdate = true;
}

function setPose(object, pose) {
  if (!object || !pose) return;
  object.position.fromArray(pose.position_m);
  const [w, i, j, k] = pose.orientation_wijk;
  object.quaternion.set(i, j, k, w);
}

function norm(v) {
  return v ? Math.hypot(v[0], v[1], v[2]) : 0;
}
