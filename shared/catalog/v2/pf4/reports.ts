/** v2 PF4 Reports. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const reports = {
};

void defineOperation; void v2;
