import type net from 'node:net';
import { lineSession, type LineSession } from './line-session.js';

/**
 * An IRC server that welcomes anyone: registration (NICK + USER) gets the welcome numerics and a MOTD,
 * PING gets PONG, JOIN puts the client in the channel alone, and everything else is accepted quietly,
 * which is what a bot waiting for orders from its channel sees on a quiet day.
 */
const SERVER = 'irc.example.net';

export function serveIrc(socket: net.Socket): void {
  let nick = '';
  let user = '';
  let welcomed = false;
  lineSession(socket, (line, s) => {
    const { command, params } = parseLine(line);
    switch (command) {
      case 'NICK':
        nick = params[0] ?? 'guest';
        break;
      case 'USER':
        user = params[0] ?? 'guest';
        break;
      case 'PING':
        return s.send(`:${SERVER} PONG ${SERVER} :${params[0] ?? ''}`);
      case 'JOIN':
        return joinChannels(params[0] ?? '', s);
      case 'PART':
        return s.send(`:${prefix()} PART ${params[0] ?? ''}`);
      case 'MODE':
        return s.send(`:${SERVER} 221 ${nick || '*'} +i`);
      case 'QUIT':
        return s.end(`ERROR :Closing Link: ${nick || '*'} (Quit: ${params[0] ?? ''})`);
      case 'CAP':
        if (params[0]?.toUpperCase() === 'LS') s.send(`:${SERVER} CAP * LS :`);
        return;
      default:
        return;
    }
    if (!welcomed && nick && user) {
      welcomed = true;
      welcome(s);
    }
  });

  const prefix = () => `${nick}!${user}@sandbox`;

  function welcome(s: LineSession): void {
    s.send(`:${SERVER} 001 ${nick} :Welcome to the Internet Relay Network ${prefix()}`);
    s.send(`:${SERVER} 002 ${nick} :Your host is ${SERVER}, running version ircd-2.11`);
    s.send(`:${SERVER} 003 ${nick} :This server was created a while ago`);
    s.send(`:${SERVER} 004 ${nick} ${SERVER} ircd-2.11 aoOirw abeiIklmnoOpqrstv`);
    s.send(`:${SERVER} 375 ${nick} :- ${SERVER} Message of the day -`);
    s.send(`:${SERVER} 372 ${nick} :- Welcome.`);
    s.send(`:${SERVER} 376 ${nick} :End of MOTD command`);
  }

  function joinChannels(list: string, s: LineSession): void {
    for (const channel of list.split(',').filter(Boolean)) {
      s.send(`:${prefix()} JOIN ${channel}`);
      s.send(`:${SERVER} 331 ${nick} ${channel} :No topic is set`);
      s.send(`:${SERVER} 353 ${nick} = ${channel} :@${nick}`);
      s.send(`:${SERVER} 366 ${nick} ${channel} :End of NAMES list`);
    }
  }
}

/** Splits `[:prefix] COMMAND arg arg :trailing` into the command and its parameters. */
export function parseLine(line: string): { command: string; params: string[] } {
  let rest = line.trim();
  if (rest.startsWith(':')) rest = rest.slice(rest.indexOf(' ') + 1 || rest.length);
  const trailingAt = rest.indexOf(' :');
  const trailing = trailingAt >= 0 ? rest.slice(trailingAt + 2) : undefined;
  const head = (trailingAt >= 0 ? rest.slice(0, trailingAt) : rest).split(' ').filter(Boolean);
  const [command = '', ...params] = head;
  if (trailing !== undefined) params.push(trailing);
  return { command: command.toUpperCase(), params };
}
