/** v2 PF4 Common. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const commonPf4 = {
};

void defineOperation; void v2;
