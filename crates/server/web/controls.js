// The side panel: live status, the rendering parameters (patched one field
// at a time, the server's refusal shown next to the field), recording, and
// loading another scene.

import { call } from './api.js';

// Fields whose values are names: offered as choices (config/README.md).
const CHOICES = {
  gradient: ['exact', 'normal_direction'],
  friction: ['pre_sliding', 'static_lp', 'yamane_springs'],
  solver: ['fast', 'reference'],
};

const STATUS_PERIOD_MS = 1000;
const BUSY_RETRY_MS = 500;

export class Controls {
  /**
   * `elements`: the containers `status`, `parameters`, `recording` and
   * `scene`; `onError(message)` records an error for the page.
   */
  constructor(elements, onError) {
    this.el = elements;
    this.onError = onError;
    this.fields = new Map(); // dotted field name -> {input, message, value}
    this.buildRecording();
    this.buildScene();
    this.pollStatus();
  }

  // --- status ---

  /**
   * Refreshes the status and the recording every second: the server's
   * figures are snapshots the telemetry thread refreshes, so a recording's
   * start or stop may show there a little after its event.
   */
  async pollStatus() {
    try {
      this.renderStatus(await call('GET', '/v1/status'));
    } catch (e) {
      this.el.status.textContent = `status unavailable: ${e.message}`;
    }
    await this.loadRecording();
    setTimeout(() => this.pollStatus(), STATUS_PERIOD_MS);
  }

  renderStatus(status) {
    const table = document.createElement('table');
    for (const [key, value] of flatten(status)) {
      const row = table.insertRow();
      row.insertCell().textContent = key;
      row.insertCell().textContent = formatValue(value);
    }
    this.el.status.replaceChildren(table);
  }

  // --- parameters ---

  async loadParameters() {
    try {
      this.renderParameters(await call('GET', '/v1/parameters'));
    } catch (e) {
      // `busy` while a scene is still starting: ask again shortly.
      if (e.code === 'busy') setTimeout(() => this.loadParameters(), BUSY_RETRY_MS);
      else this.onError(`parameters: ${e.message}`);
    }
  }

  /** Rebuilds the form when the set of fields changed, else updates values. */
  renderParameters(params) {
    const entries = [];
    for (const [material, fields] of Object.entries(params.materials ?? {})) {
      for (const [name, value] of Object.entries(fields)) entries.push([`materials.${material}.${name}`, value]);
    }
    for (const [name, value] of Object.entries(params.rendering ?? {})) entries.push([`rendering.${name}`, value]);

    const names = entries.map(([name]) => name).join();
    if (names !== this.fieldNames) {
      this.fieldNames = names;
      this.fields.clear();
      const root = this.el.parameters;
      root.replaceChildren();
      let group = null;
      for (const [name, value] of entries) {
        const groupName = name.slice(0, name.lastIndexOf('.'));
        if (groupName !== group) {
          group = groupName;
          const heading = document.createElement('h3');
          heading.textContent = `[${groupName}]`;
          root.appendChild(heading);
        }
        root.appendChild(this.buildField(name, value));
      }
    }
    for (const [name, value] of entries) {
      const field = this.fields.get(name);
      field.value = value;
      // Leave a field the user is editing alone.
      if (document.activeElement !== field.input) setInput(field.input, value);
    }
    this.el.generation.textContent = `generation ${params.generation}`;
  }

  buildField(name, value) {
    const form = document.createElement('form');
    form.className = 'field';
    form.dataset.field = name;
    const label = document.createElement('label');
    const id = `param-${name.replaceAll('.', '-')}`;
    label.htmlFor = id;
    label.textContent = name.slice(name.lastIndexOf('.') + 1);
    const input = makeInput(name, value);
    input.id = id;
    input.name = name;
    const button = document.createElement('button');
    button.type = 'submit';
    button.textContent = 'Set';
    const message = document.createElement('span');
    message.className = 'message';
    message.setAttribute('role', 'status');
    form.append(label, input, button, message);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submitField(name);
    });
    if (input.type === 'checkbox' || input.tagName === 'SELECT') {
      input.addEventListener('change', () => this.submitField(name));
    }
    this.fields.set(name, { input, message, value });
    return form;
  }

  async submitField(name) {
    const { input, message, value } = this.fields.get(name);
    const next = readInput(input, value);
    showMessage(message, '', '');
    if (next === undefined) {
      showMessage(message, 'error', 'not a number');
      return;
    }
    try {
      const reply = await call('PATCH', '/v1/parameters', nest(name, next));
      showMessage(message, 'ok', reply?.applied_tick !== undefined ? `applied at tick ${reply.applied_tick}` : 'applied');
      await this.loadParameters();
    } catch (e) {
      // The refusal names the field as the config does; show it there, or
      // here when it names none of the panel's fields.
      const target = this.fields.get(e.field)?.message ?? message;
      showMessage(target, 'error', e.field ? `${e.message} (${e.field})` : e.message);
    }
  }

  // --- recording ---

  buildRecording() {
    const form = document.createElement('form');
    const path = Object.assign(document.createElement('input'), { name: 'recording-path', value: 'run.mcap', size: 16 });
    const start = Object.assign(document.createElement('button'), { type: 'submit', textContent: 'Start' });
    const stop = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Stop' });
    this.recordingState = document.createElement('div');
    this.recordingMessage = Object.assign(document.createElement('span'), { className: 'message' });
    form.append(path, start, stop, this.recordingMessage);
    this.el.recording.append(this.recordingState, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.recordingAction('POST', { path: path.value });
    });
    stop.addEventListener('click', () => this.recordingAction('DELETE'));
  }

  async recordingAction(method, body) {
    showMessage(this.recordingMessage, '', '');
    try {
      const reply = await call(method, '/v1/recording', body);
      if (method === 'DELETE') {
        showMessage(this.recordingMessage, 'ok', `finished ${reply?.path ?? ''} (${formatValue(reply?.ticks ?? '?')} ticks)`);
      }
    } catch (e) {
      showMessage(this.recordingMessage, 'error', e.message);
    }
    await this.loadRecording();
  }

  async loadRecording() {
    try {
      this.showRecording(await call('GET', '/v1/recording'));
    } catch (e) {
      this.recordingState.textContent = `recording unavailable: ${e.message}`;
    }
  }

  /** The recording in progress (`GET /v1/recording`), or none. */
  showRecording(recording) {
    this.recordingState.textContent = recording
      ? `recording ${[...flatten(recording)].map(([k, v]) => `${k} ${formatValue(v)}`).join(', ')}`
      : 'not recording';
  }

  // --- scene ---

  buildScene() {
    const form = document.createElement('form');
    this.scenePath = Object.assign(document.createElement('input'), { name: 'scene-path', size: 24 });
    const load = Object.assign(document.createElement('button'), { type: 'submit', textContent: 'Load' });
    const message = Object.assign(document.createElement('span'), { className: 'message' });
    form.append(this.scenePath, load, message);
    this.el.scene.append(form);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      showMessage(message, '', 'building…');
      load.disabled = true;
      try {
        await call('POST', '/v1/scene', { path: this.scenePath.value });
        showMessage(message, 'ok', 'loaded');
      } catch (e) {
        showMessage(message, 'error', e.field ? `${e.message} (${e.field})` : e.message);
      } finally {
        load.disabled = false;
      }
    });
  }

  /** A new scene on the stream: its path in the scene field, its parameters. */
  setScene(hello) {
    if (document.activeElement !== this.scenePath) this.scenePath.value = hello.scene ?? '';
    this.loadParameters();
  }
}

function makeInput(name, value) {
  const key = name.slice(name.lastIndexOf('.') + 1);
  if (typeof value === 'boolean') return Object.assign(document.createElement('input'), { type: 'checkbox' });
  if (CHOICES[key]) {
    const select = document.createElement('select');
    for (const choice of new Set([...CHOICES[key], value])) select.add(new Option(choice, choice));
    return select;
  }
  if (typeof value === 'number') {
    return Object.assign(document.createElement('input'), { type: 'number', step: 'any', size: 10 });
  }
  return Object.assign(document.createElement('input'), { type: 'text', size: 12 });
}

function setInput(input, value) {
  if (input.type === 'checkbox') input.checked = value;
  else input.value = String(value);
}

/** The input's value in the type of the field's current value; undefined if unreadable. */
function readInput(input, current) {
  if (input.type === 'checkbox') return input.checked;
  if (typeof current === 'number') {
    const text = input.value.trim();
    const number = Number(text);
    return text === '' || !Number.isFinite(number) ? undefined : number;
  }
  return input.value;
}

/** `nest("materials.wood.friction_coefficient", 0.4)` → `{materials: {wood: {friction_coefficient: 0.4}}}`. */
function nest(name, value) {
  return name.split('.').reduceRight((inner, key) => ({ [key]: inner }), value);
}

function showMessage(element, kind, text) {
  element.className = `message ${kind}`;
  element.textContent = text;
}

/**
 * `[dotted key, value]` for every scalar, and every array of scalars, in a
 * JSON value; the items of an array of objects are keyed by their index.
 */
function* flatten(value, prefix = '') {
  const isObject = (v) => v !== null && typeof v === 'object';
  const nested = Array.isArray(value) ? value.some(isObject) : isObject(value);
  if (nested) {
    for (const [key, inner] of Object.entries(value)) yield* flatten(inner, prefix ? `${prefix}.${key}` : key);
  } else {
    yield [prefix, value];
  }
}

function formatValue(value) {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return value.toLocaleString('en-US');
    return Math.abs(value) >= 1000 ? value.toFixed(0) : String(Number(value.toPrecision(4)));
  }
  if (Array.isArray(value)) return value.map(formatValue).join(', ');
  return value === null ? '–' : String(value);
}
