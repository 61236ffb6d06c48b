/** v2 PF4 Backup. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const backup = {
};

void defineOperation; void v2;
