/** v2 PF4 Config. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const config = {
};

void defineOperation; void v2;
