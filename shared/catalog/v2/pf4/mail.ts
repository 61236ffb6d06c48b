/** v2 PF4 Mail. */
import { defineOperation } from '../../operation.js';
import { V2_PF4 as v2 } from '../paths.js';

export const mail = {
};

void defineOperation; void v2;
