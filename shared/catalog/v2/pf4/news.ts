/** v2 PF4 News. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const news = {
};

void defineOperation; void v2;
