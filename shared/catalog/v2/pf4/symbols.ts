/** v2 PF4 Symbols. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const symbols = {
};

void defineOperation; void v2;
