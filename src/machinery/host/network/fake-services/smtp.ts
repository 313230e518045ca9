import type net from 'node:net';
import { lineSession, type LineSession } from './line-session.js';

/**
 * A mail server that accepts every message: banner, EHLO/HELO, AUTH (any credentials), MAIL, RCPT,
 * DATA up to the lone dot, RSET, NOOP, QUIT. The message itself is only in the capture.
 */
const HOST = 'mail.example.net';

export function serveSmtp(socket: net.Socket): void {
  let inData = false;
  let authStep: 'none' | 'login-user' | 'login-password' | 'plain' = 'none';
  const session = lineSession(socket, (line, s) => {
    if (inData) {
      if (line === '.') {
        inData = false;
        s.send(`250 2.0.0 Ok: queued as ${queueId()}`);
      }
      return;
    }
    if (authStep !== 'none') return continueAuth(line, s);
    const [verb = '', ...rest] = line.split(' ');
    const argument = rest.join(' ');
    switch (verb.toUpperCase()) {
      case 'EHLO':
        s.send(`250-${HOST} Hello ${argument || 'there'}`);
        s.send('250-SIZE 52428800');
        s.send('250-8BITMIME');
        s.send('250-AUTH PLAIN LOGIN');
        s.send('250 HELP');
        return;
      case 'HELO':
        return s.send(`250 ${HOST} Hello ${argument || 'there'}`);
      case 'AUTH':
        return startAuth(argument, s);
      case 'MAIL':
      case 'RCPT':
      case 'RSET':
      case 'NOOP':
        return s.send('250 2.1.0 Ok');
      case 'VRFY':
        return s.send('252 2.1.5 Cannot VRFY user, but will accept message');
      case 'DATA':
        inData = true;
        return s.send('354 End data with <CR><LF>.<CR><LF>');
      case 'QUIT':
        return s.end('221 2.0.0 Bye');
      default:
        return s.send('502 5.5.2 Error: command not recognized');
    }
  });

  function startAuth(argument: string, s: LineSession): void {
    const [mechanism = '', initial] = argument.split(' ');
    if (mechanism.toUpperCase() === 'LOGIN') {
      authStep = 'login-user';
      return s.send('334 VXNlcm5hbWU6');
    }
    if (mechanism.toUpperCase() === 'PLAIN' && initial === undefined) {
      authStep = 'plain';
      return s.send('334 ');
    }
    s.send('235 2.7.0 Authentication successful');
  }

  function continueAuth(_line: string, s: LineSession): void {
    if (authStep === 'login-user') {
      authStep = 'login-password';
      return s.send('334 UGFzc3dvcmQ6');
    }
    authStep = 'none';
    s.send('235 2.7.0 Authentication successful');
  }

  session.send(`220 ${HOST} ESMTP Postfix`);
}

function queueId(): string {
  return Math.floor(Math.random() * 0xffffffffff).toString(16).toUpperCase().padStart(10, '0');
}
