/** v2 PF4 Margins. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const margins = {
};

void defineOperation; void v2;
