import { User } from './models/user';
import { format } from '@lib/format';
import * as React from 'react';

export function show(u: User): string { return format(u.name); }
