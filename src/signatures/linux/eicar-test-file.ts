import { needlesInFile } from '../helpers/file-search.js';
import { storedFilesOf } from '../helpers/report-data.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

// Assembled from halves so that nestbox's own build output is not itself flagged by scanners.
const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

export class EicarTestFile extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'eicar_test_file',
    description: 'Contains the EICAR anti-virus test string',
    severity: 3,
    categories: ['test'],
    references: ['https://www.eicar.org/download-anti-malware-testfile/'],
    ttp: [],
  };

  override async onComplete(ctx: SignatureContext): Promise<void> {
    for (const file of storedFilesOf(ctx.report, ctx.paths.binary)) {
      if ((await needlesInFile(file.path, [EICAR], 64 * 1024 * 1024)).size > 0) this.markIoc('file', file.label, 'EICAR test string');
    }
  }
}
