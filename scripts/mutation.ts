/**
 * `npm run test:mutation [folder|folder:part ...] [--scores]`: mutation testing of the core, one folder or part at a
 * time, then the score table (test/mutation/mutation.ts holds the folders, parts and scoring).
 */
import { main } from '../test/mutation/mutation.js';

main(process.argv.slice(2));
