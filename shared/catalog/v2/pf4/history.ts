/** v2 PF4 History. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const history = {
};

void defineOperation; void v2;
