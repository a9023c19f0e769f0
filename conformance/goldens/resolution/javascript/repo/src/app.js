const util = require('./util');
import { Button } from './components';
import _ from 'lodash';

export default function app() { return util.clamp(Button ? 1 : 0); }
