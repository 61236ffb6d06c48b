/** v2 PF4 Plugins. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const plugins = {
};

void defineOperation; void v2;
