import type net from 'node:net';
import { lineSession } from './line-session.js';

/**
 * An FTP control connection that lets anyone log in and look around an empty root. There is no data
 * connection (PASV/PORT are refused): uploads and downloads fail, but the credentials and commands the
 * sample tried are in the capture.
 */
export function serveFtp(socket: net.Socket): void {
  const session = lineSession(socket, (line, s) => {
    const [verb = ''] = line.split(' ');
    switch (verb.toUpperCase()) {
      case 'USER':
        return s.send('331 Please specify the password.');
      case 'PASS':
        return s.send('230 Login successful.');
      case 'SYST':
        return s.send('215 UNIX Type: L8');
      case 'PWD':
      case 'XPWD':
        return s.send('257 "/" is the current directory');
      case 'CWD':
      case 'CDUP':
        return s.send('250 Directory successfully changed.');
      case 'TYPE':
        return s.send('200 Switching to Binary mode.');
      case 'FEAT':
        s.send('211-Features:');
        s.send(' UTF8');
        return s.send('211 End');
      case 'NOOP':
        return s.send('200 NOOP ok.');
      case 'QUIT':
        return s.end('221 Goodbye.');
      case 'PASV':
      case 'EPSV':
      case 'PORT':
      case 'EPRT':
        return s.send('425 Cannot open data connection.');
      default:
        return s.send('502 Command not implemented.');
    }
  });
  session.send('220 (vsFTPd 3.0.3)');
}
