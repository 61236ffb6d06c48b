/** v2 PF4 Groups. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const groups = {
};

void defineOperation; void v2;
