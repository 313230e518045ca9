import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cookieValue, SESSION_LIFETIME_MS, SessionStore } from '../../src/api/sessions.js';

describe('web interface sessions', () => {
  it('finds a session by its id until it expires, and never after', () => {
    let now = 1_000_000;
    const store = new SessionStore(() => now);
    const { id, session } = store.create();
    assert.equal(store.find(id), session);
    assert.equal(store.find(`${id}x`), undefined);
    assert.equal(store.find(''), undefined);
    now += SESSION_LIFETIME_MS - 1;
    assert.equal(store.find(id), session);
    now += 1;
    assert.equal(store.find(id), undefined);
  });

  it('gives every session its own id and CSRF value, and forgets one that signs out', () => {
    const store = new SessionStore();
    const first = store.create();
    const second = store.create();
    assert.notEqual(first.id, second.id);
    assert.notEqual(first.session.csrf, second.session.csrf);
    store.delete(first.id);
    assert.equal(store.find(first.id), undefined);
    assert.equal(store.find(second.id), second.session);
  });

  it('reads its cookie among others, by exact name', () => {
    assert.equal(cookieValue('a=1; nestbox_session=abc; b=2', 'nestbox_session'), 'abc');
    assert.equal(cookieValue(undefined, 'nestbox_session'), undefined);
    assert.equal(cookieValue('xnestbox_session=abc', 'nestbox_session'), undefined);
    assert.equal(cookieValue('nestbox_session=', 'nestbox_session'), '');
  });
});

