/** v2 PF4 Online. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const online = {
};

void defineOperation; void v2;
