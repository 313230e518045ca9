import type { NewTask } from '../../src/db/schema.js';

/** A complete task row for tests that store tasks directly; every field can be overridden. */
export function taskRow(overrides: Partial<NewTask> = {}): NewTask {
  return {
    target: '/nonexistent',
    category: 'file',
    timeout: 0,
    priority: 1,
    custom: '',
    owner: '',
    machine: '',
    package: '',
    platform: '',
    tags: '[]',
    options: '',
    memory: 0,
    enforce_timeout: 0,
    clock: '2026-01-01T10:00:00.000Z',
    added_on: '2026-01-01T10:00:00.000Z',
    status: 'pending',
    ...overrides,
  };
}
